import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import {
  accessTokenFor,
  authorize,
  openShop,
  type ReceivedWebhook,
  startReceiver,
  type WebhookReceiver,
} from "./helpers.js";

// Supplement C, checked from the receiver's side: signatures are verified here with node:crypto only.

let sandbox: SandboxServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  sandbox.reset();
  receiver = await startReceiver();
});
afterEach(() => receiver.close());

const MINUTE = 60_000;

/** Verifies like a receiver: any v1 entry matching one of our secrets, timestamp within 300 s of our clock. */
function verify(webhook: ReceivedWebhook, secret: string): boolean {
  const timestamp = String(webhook.headers["service-webhook-timestamp"]);
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${timestamp}.${webhook.rawBody}`).digest();
  return String(webhook.headers["service-webhook-signature"])
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith("v1="))
    .some((entry) => {
      const given = Buffer.from(entry.slice(3), "hex");
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

async function shopWithWebhooks(secrets?: string[]) {
  const shop = await openShop(sandbox);
  const config = sandbox.setWebhooks({ merchantId: shop.merchant.merchantId, urls: [receiver.url], secrets });
  return { shop, secrets: config.secrets };
}

describe("webhook delivery", () => {
  it("POSTs signed events: body { id, type, createdAt, data }, id header = body id", async () => {
    const { shop, secrets } = await shopWithWebhooks();
    expect(secrets).toHaveLength(1);
    sandbox.advanceClock(7 * 24 * 3600_000); // createdAt follows the virtual clock, the signature the real one
    const accessToken = await accessTokenFor(sandbox, shop.merchant);
    await authorize(sandbox, { ...shop, accessToken });
    await sandbox.settle();
    expect(receiver.received.map((webhook) => webhook.event.type)).toEqual([
      "authorization.succeeded",
      "order.captured",
    ]);
    for (const webhook of receiver.received) {
      expect(webhook.headers["content-type"]).toBe("application/json");
      expect(webhook.headers["service-webhook-id"]).toBe(webhook.event.id);
      expect(Object.keys(webhook.event)).toEqual(["id", "type", "createdAt", "data"]);
      expect(Date.parse(webhook.event.createdAt)).toBeGreaterThan(Date.now() + 6 * 24 * 3600_000);
      expect(verify(webhook, secrets[0]!)).toBe(true);
      expect(verify(webhook, "another-secret")).toBe(false);
      expect(verify({ ...webhook, rawBody: `${webhook.rawBody} ` }, secrets[0]!)).toBe(false);
    }
    expect(sandbox.webhookDeliveries().map((delivery) => [delivery.outcome, delivery.statusCode])).toEqual([
      ["delivered", 200],
      ["delivered", 200],
    ]);
  });

  it("tells the receiver about retries and the final failure of an asynchronous authorization", async () => {
    const { shop, secrets } = await shopWithWebhooks();
    sandbox.updateCustomerToken(shop.customerToken, { failureReason: "PAYMENT_FAILED" });
    const created = await authorize(sandbox, shop, {
      attemptSchedule: { relative: ["00.00:01:00", "00.00:01:00"] },
    });
    // One second to spare: virtual time runs on in real time while attempt 1 is made, so attempt 2
    // can fall due a millisecond after "exactly two minutes" and then run after settle returned.
    sandbox.advanceClock(2 * MINUTE + 1000);
    await sandbox.settle();
    expect(receiver.received.map((webhook) => [webhook.event.type, webhook.event.data.attempt])).toEqual([
      ["authorization.retrying", 1],
      ["authorization.failed", 2],
    ]);
    expect(receiver.received[1]?.event.data).toMatchObject({
      authorizationId: created.json.data.authorizationId,
      reason: "PAYMENT_FAILED",
    });
    expect(receiver.received.every((webhook) => verify(webhook, secrets[0]!))).toBe(true);
  });

  it("signs with every secret during rotation", async () => {
    const { shop } = await shopWithWebhooks(["old-secret", "new-secret"]);
    await authorize(sandbox, shop);
    await sandbox.settle();
    const [webhook] = receiver.received;
    expect(String(webhook?.headers["service-webhook-signature"]).split(",")).toHaveLength(2);
    expect(verify(webhook!, "old-secret")).toBe(true);
    expect(verify(webhook!, "new-secret")).toBe(true);
  });

  it("redelivers a failed delivery after the next delay of the virtual clock, with the same event id", async () => {
    const { shop } = await shopWithWebhooks();
    receiver.failNext(500);
    await authorize(sandbox, shop, {
      attemptSchedule: { preferSynchronous: true },
      order: { captureMode: "Manual" },
    });
    await sandbox.settle();
    expect(receiver.received).toHaveLength(1);
    const [failed] = sandbox.webhookDeliveries();
    expect(failed).toMatchObject({
      outcome: "failed",
      statusCode: 500,
      attempt: 1,
      nextAttemptAt: expect.any(String),
    });

    sandbox.advanceClock(MINUTE - 1000);
    await sandbox.settle();
    expect(receiver.received).toHaveLength(1);
    sandbox.advanceClock(1000);
    await sandbox.settle();
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]?.event.id).toBe(receiver.received[0]?.event.id);
    expect(sandbox.webhookDeliveries()[1]).toMatchObject({ outcome: "delivered", attempt: 2 });
  });

  it("gives up after the last redelivery and records it", async () => {
    const { shop } = await shopWithWebhooks();
    receiver.failNext(503, 503, 503, 503, 503, 503);
    await authorize(sandbox, shop, {
      attemptSchedule: { preferSynchronous: true },
      order: { captureMode: "Manual" },
    });
    await sandbox.settle();
    for (const delay of [1, 5, 30, 120, 480]) {
      sandbox.advanceClock(delay * MINUTE);
      await sandbox.settle();
    }
    const deliveries = sandbox.webhookDeliveries();
    expect(deliveries.map((delivery) => delivery.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(deliveries.at(-1)?.outcome).toBe("gave_up");
    sandbox.advanceClock(24 * 60 * MINUTE);
    await sandbox.settle();
    expect(receiver.received).toHaveLength(6);
  });

  it("treats no answer within the timeout, or a refused connection, as a failure", async () => {
    const quick = await startSandbox({ webhookTimeoutMs: 100 });
    const silent = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const refusing = await startReceiver();
    await refusing.close();
    try {
      const merchant = quick.createMerchant();
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
      quick.setWebhooks({ merchantId: merchant.merchantId, urls: [silentUrl, refusing.url] });
      const token = quick.createCustomerToken({ merchantId: merchant.merchantId, status: "Pending" });
      quick.setCustomerTokenStatus(token.customerToken, "Active");
      await quick.settle();
      const byUrl = new Map(quick.webhookDeliveries().map((delivery) => [delivery.url, delivery]));
      expect(byUrl.get(silentUrl)).toMatchObject({
        outcome: "failed",
        statusCode: null,
        error: expect.stringMatching(/timeout|abort/i),
      });
      expect(byUrl.get(refusing.url)).toMatchObject({ outcome: "failed", statusCode: null });
    } finally {
      await quick.close();
      silent.closeAllConnections();
      silent.close();
    }
  });

  it("duplicate: each delivery is sent twice with the same event id", async () => {
    const { shop } = await shopWithWebhooks();
    sandbox.setWebhookDelivery({ duplicate: true });
    await authorize(sandbox, shop);
    await sandbox.settle();
    const ids = receiver.received.map((webhook) => webhook.event.id);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(2);
    expect(ids[0]).toBe(ids[1]);
  });

  it("outOfOrder: each batch is delivered newest first", async () => {
    const { shop } = await shopWithWebhooks();
    sandbox.setWebhookDelivery({ outOfOrder: true });
    await authorize(sandbox, shop);
    await sandbox.settle();
    expect(receiver.received.map((webhook) => webhook.event.type)).toEqual([
      "order.captured",
      "authorization.succeeded",
    ]);
  });
});
