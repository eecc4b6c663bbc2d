import { afterEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { type GatedReceiver, startGatedReceiver } from "./gated-receiver.js";
import { authorize, call, openShop } from "./helpers.js";

// Several webhook deliveries in flight per receiver URL, bounded; checked from a real receiver that
// holds its answers. Set-up and inspection go through the /sandbox control routes.

const MINUTE = 60_000;
let sandbox: SandboxServer | undefined;
const receivers: GatedReceiver[] = [];

afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  for (const receiver of receivers.splice(0)) await receiver.close();
});

async function start(options: Parameters<typeof startSandbox>[0] = {}): Promise<SandboxServer> {
  sandbox = await startSandbox(options);
  return sandbox;
}

async function receiver(options: { held?: boolean } = {}): Promise<GatedReceiver> {
  const started = await startGatedReceiver(options);
  receivers.push(started);
  return started;
}

async function merchantWithWebhooks(server: SandboxServer, urls: string[]): Promise<string> {
  const merchant = (await call(server, "POST", "/sandbox/merchants", { body: {} })).json;
  const config = await call(server, "POST", "/sandbox/webhooks", {
    body: { merchantId: merchant.merchantId, urls },
  });
  expect(config.status).toBe(200);
  return merchant.merchantId;
}

/** `count` customer tokens moved Pending → Active: one event each, about `count` different tokens. */
async function tokenEvents(server: SandboxServer, merchantId: string, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    const token = (
      await call(server, "POST", "/sandbox/customer-tokens", { body: { merchantId, status: "Pending" } })
    ).json;
    const changed = await call(server, "POST", `/sandbox/customer-tokens/${token.customerToken}/status`, {
      body: { status: "Active" },
    });
    expect(changed.status).toBe(200);
  }
}

const settle = (server: SandboxServer) => call(server, "POST", "/sandbox/settle");
const deliveries = async (server: SandboxServer) =>
  (await call(server, "GET", "/sandbox/webhook-deliveries")).json as Array<Record<string, unknown>>;

describe("concurrent webhook delivery", () => {
  it("keeps 16 deliveries in flight to a slow receiver by default, never more, and delivers all", async () => {
    const server = await start();
    const slow = await receiver();
    await tokenEvents(server, await merchantWithWebhooks(server, [slow.url]), 40);
    await slow.whenOpen(16);
    expect(slow.open).toBe(16);
    slow.release();
    await settle(server);
    expect(slow.maxOpen).toBe(16);
    expect(new Set(slow.received.map((event) => event.id)).size).toBe(40);
    const records = await deliveries(server);
    expect(records).toHaveLength(40);
    expect(records.every((record) => record.outcome === "delivered")).toBe(true);
  });

  it("bounds each URL on its own, with the limit of the option", async () => {
    const server = await start({ webhookConcurrency: 4 });
    const first = await receiver();
    const second = await receiver();
    await tokenEvents(server, await merchantWithWebhooks(server, [first.url, second.url]), 10);
    await Promise.all([first.whenOpen(4), second.whenOpen(4)]);
    first.release();
    second.release();
    await settle(server);
    expect([first.maxOpen, second.maxOpen]).toEqual([4, 4]);
    expect([first.received.length, second.received.length]).toEqual([10, 10]);
  });

  it("never lets two events about one authorization overtake each other", async () => {
    const server = await start();
    const slow = await receiver();
    const shop = await openShop(server);
    await call(server, "POST", "/sandbox/webhooks", {
      body: { merchantId: shop.merchant.merchantId, urls: [slow.url] },
    });
    for (let index = 0; index < 20; index++) {
      expect((await authorize(server, shop, { attemptSchedule: { preferSynchronous: true } })).status).toBe(
        200,
      );
    }
    await slow.whenOpen(16);
    // In flight: the first event of 16 different authorizations; their second waits for an answer.
    const open = slow.openEvents();
    expect(open.every((event) => event.type === "authorization.succeeded")).toBe(true);
    expect(new Set(open.map((event) => event.data.authorizationId)).size).toBe(16);
    slow.release();
    await settle(server);
    expect(slow.received).toHaveLength(40);
    for (const types of typesByAuthorization(slow).values()) {
      expect(types).toEqual(["authorization.succeeded", "order.captured"]);
    }
  });

  it("outOfOrder still delivers each authorization's events newest first", async () => {
    const server = await start();
    const slow = await receiver();
    const shop = await openShop(server);
    await call(server, "POST", "/sandbox/webhooks", {
      body: { merchantId: shop.merchant.merchantId, urls: [slow.url] },
    });
    await call(server, "POST", "/sandbox/webhook-delivery", { body: { outOfOrder: true } });
    for (let index = 0; index < 20; index++) {
      await authorize(server, shop, { attemptSchedule: { preferSynchronous: true } });
    }
    await slow.whenOpen(16);
    expect(slow.openEvents().every((event) => event.type === "order.captured")).toBe(true);
    slow.release();
    await settle(server);
    expect(typesByAuthorization(slow).size).toBe(20);
    for (const types of typesByAuthorization(slow).values()) {
      expect(types).toEqual(["order.captured", "authorization.succeeded"]);
    }
  });

  it("duplicate sends every event twice, both copies recorded", async () => {
    const server = await start();
    const fast = await receiver({ held: false });
    await call(server, "POST", "/sandbox/webhook-delivery", { body: { duplicate: true } });
    await tokenEvents(server, await merchantWithWebhooks(server, [fast.url]), 30);
    await settle(server);
    const counts = new Map<string, number>();
    for (const event of fast.received) counts.set(event.id, (counts.get(event.id) ?? 0) + 1);
    expect(counts.size).toBe(30);
    expect([...counts.values()].every((count) => count === 2)).toBe(true);
    const records = await deliveries(server);
    expect(records.filter((record) => record.copy === 2 && record.outcome === "delivered")).toHaveLength(30);
  });

  it("redelivers every failed delivery after growing delays, with the same event id, until it is taken", async () => {
    const server = await start();
    const flaky = await receiver({ held: false });
    flaky.failNext(...Array.from({ length: 40 }, () => 500)); // attempts 1 and 2 of all 20 events
    await tokenEvents(server, await merchantWithWebhooks(server, [flaky.url]), 20);
    await settle(server);
    await call(server, "POST", "/sandbox/clock/advance", { body: { ms: MINUTE } });
    await settle(server);
    await call(server, "POST", "/sandbox/clock/advance", { body: { ms: 5 * MINUTE } });
    await settle(server);

    const byEvent = new Map<string, Array<Record<string, unknown>>>();
    for (const record of await deliveries(server)) {
      byEvent.set(String(record.eventId), [...(byEvent.get(String(record.eventId)) ?? []), record]);
    }
    expect(byEvent.size).toBe(20);
    for (const records of byEvent.values()) {
      expect(records.map((record) => [record.attempt, record.outcome])).toEqual([
        [1, "failed"],
        [2, "failed"],
        [3, "delivered"],
      ]);
      const delays = records
        .slice(0, 2)
        .map((record) => Date.parse(String(record.nextAttemptAt)) - Date.parse(String(record.at)));
      expect(delays).toEqual([MINUTE, 5 * MINUTE]);
    }
    expect(flaky.received).toHaveLength(60);
    expect(new Set(flaky.received.map((event) => event.id)).size).toBe(20);
  });

  it("a reset with deliveries in flight forgets them, and later events are delivered", async () => {
    const server = await start();
    const slow = await receiver();
    await tokenEvents(server, await merchantWithWebhooks(server, [slow.url]), 30);
    await slow.whenOpen(16);
    expect((await call(server, "POST", "/sandbox/reset")).status).toBe(200);
    slow.release();
    await settle(server);
    expect(await deliveries(server)).toEqual([]);

    const before = slow.received.length;
    await tokenEvents(server, await merchantWithWebhooks(server, [slow.url]), 3);
    await settle(server);
    expect(slow.received.length - before).toBe(3);
    expect((await deliveries(server)).map((record) => record.outcome)).toEqual([
      "delivered",
      "delivered",
      "delivered",
    ]);
  });

  it("rejects a limit that is not a whole number above 0", async () => {
    for (const webhookConcurrency of [0, -1, 1.5, Number.NaN]) {
      await expect(startSandbox({ webhookConcurrency })).rejects.toThrow(/webhookConcurrency/);
    }
  });
});

function typesByAuthorization(receiver: GatedReceiver): Map<unknown, string[]> {
  const types = new Map<unknown, string[]>();
  for (const event of receiver.received) {
    const id = event.data.authorizationId;
    types.set(id, [...(types.get(id) ?? []), event.type]);
  }
  return types;
}
