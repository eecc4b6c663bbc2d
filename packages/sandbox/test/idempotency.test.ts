import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { authorize, call, errorReasons, openShop } from "./helpers.js";

// Specification section 8 and supplement D: what is stored, replayed, refused and forgotten.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const HOUR = 3600_000;
const keyHeader = (key: string) => ({ "Service-Idempotency-Key": key });

describe("idempotency keys", () => {
  it("replay the stored status and body (same id) and run the request once", async () => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    const first = await authorize(sandbox, shop, {}, keyHeader(key));
    const second = await authorize(sandbox, shop, {}, keyHeader(key.toUpperCase()));
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.text).toBe(first.text);
    expect(sandbox.authorizations()).toHaveLength(1);
    expect(sandbox.authorizations()[0]?.idempotencyKey).toBe(key);
  });

  it("store 400, 404 and 422 outcomes too", async () => {
    const shop = await openShop(sandbox);
    const invalidKey = randomUUID();
    const invalid = await authorize(sandbox, shop, { order: { currency: "XXX" } }, keyHeader(invalidKey));
    const invalidAgain = await authorize(sandbox, shop, {}, keyHeader(invalidKey));
    expect([invalid.status, invalidAgain.text]).toEqual([400, invalid.text]);

    const missingKey = randomUUID();
    const missing = await authorize(
      sandbox,
      { ...shop, customerToken: randomUUID() },
      {},
      keyHeader(missingKey),
    );
    expect([missing.status, (await authorize(sandbox, shop, {}, keyHeader(missingKey))).text]).toEqual([
      404,
      missing.text,
    ]);

    sandbox.setCustomerTokenStatus(shop.customerToken, "Pending");
    const pendingKey = randomUUID();
    const pending = await authorize(sandbox, shop, {}, keyHeader(pendingKey));
    sandbox.setCustomerTokenStatus(shop.customerToken, "Active");
    const pendingAgain = await authorize(sandbox, shop, {}, keyHeader(pendingKey));
    expect([pending.status, pendingAgain.text]).toEqual([422, pending.text]);
    expect(sandbox.authorizations()).toEqual([]);
  });

  it("are scoped per merchant", async () => {
    const shop = await openShop(sandbox);
    const other = await openShop(sandbox);
    const key = randomUUID();
    const mine = await authorize(sandbox, shop, {}, keyHeader(key));
    const theirs = await authorize(sandbox, other, {}, keyHeader(key));
    expect(theirs.status).toBe(202);
    expect(theirs.json.data.authorizationId).not.toBe(mine.json.data.authorizationId);
  });

  it("409 IDEMPOTENCY_REQUEST_IN_PROGRESS for a concurrent request with the same key", async () => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    sandbox.injectFault({ kind: "latency", latencyMs: 500, match: { path: "/purchase/authorizations" } });
    const slow = authorize(sandbox, shop, {}, keyHeader(key));
    await vi.waitFor(() => expect(sandbox.stats().idempotencyKeys).toBe(1), { interval: 5, timeout: 10_000 }); // the slow one holds the key
    const concurrent = await authorize(sandbox, shop, {}, keyHeader(key));
    expect(concurrent.status).toBe(409);
    expect(errorReasons(concurrent)).toEqual(["IDEMPOTENCY_REQUEST_IN_PROGRESS"]);
    const first = await slow;
    expect(first.status).toBe(202);
    expect((await authorize(sandbox, shop, {}, keyHeader(key))).text).toBe(first.text);
  });

  it("expire after one hour of virtual time: 422 IDEMPOTENCY_RESPONSE_EXPIRED", async () => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    const first = await authorize(sandbox, shop, {}, keyHeader(key));
    sandbox.advanceClock(HOUR - 1000);
    const fresh = await accessToken(shop);
    expect((await authorize(sandbox, { ...shop, accessToken: fresh }, {}, keyHeader(key))).text).toBe(
      first.text,
    );
    sandbox.advanceClock(2000);
    const expired = await authorize(sandbox, { ...shop, accessToken: fresh }, {}, keyHeader(key));
    expect(expired.status).toBe(422);
    expect(errorReasons(expired)).toEqual(["IDEMPOTENCY_RESPONSE_EXPIRED"]);
  });

  it("400 IDEMPOTENCY_KEY_PARSING for a key that is not a GUID", async () => {
    const shop = await openShop(sandbox);
    for (const key of ["abc", "", `${randomUUID()}x`]) {
      const response = await authorize(sandbox, shop, {}, keyHeader(key));
      expect(response.status).toBe(400);
      expect(errorReasons(response)).toEqual(["IDEMPOTENCY_KEY_PARSING"]);
    }
  });

  it("do not store 401 or 503, so a retry with the same key really runs", async () => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    expect((await authorize(sandbox, { ...shop, accessToken: "wrong" }, {}, keyHeader(key))).status).toBe(
      401,
    );
    sandbox.injectFault({ kind: "unavailable" });
    expect((await authorize(sandbox, shop, {}, keyHeader(key))).status).toBe(503);
    expect((await authorize(sandbox, shop, {}, keyHeader(key))).status).toBe(202);
    expect(sandbox.authorizations()).toHaveLength(1);
  });

  it("store the outcome before a dropped connection, so the retry gets it", async () => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    sandbox.injectFault({ kind: "drop_after_commit" });
    await expect(authorize(sandbox, shop, {}, keyHeader(key))).rejects.toThrow();
    expect(sandbox.authorizations()).toHaveLength(1);
    const retry = await authorize(sandbox, shop, {}, keyHeader(key));
    expect(retry.json.data.authorizationId).toBe(sandbox.authorizations()[0]?.authorizationId);
  });

  it("409 from the in_progress fault without processing", async () => {
    const shop = await openShop(sandbox);
    sandbox.injectFault({ kind: "in_progress" });
    const response = await authorize(sandbox, shop, {}, keyHeader(randomUUID()));
    expect(errorReasons(response)).toEqual(["IDEMPOTENCY_REQUEST_IN_PROGRESS"]);
    expect(sandbox.authorizations()).toEqual([]);
  });

  it("work the same for order writes", async () => {
    const shop = await openShop(sandbox, { captureMode: "Manual" });
    const created = await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
    const path = `/manage/orders/${created.json.data.orderId}/capture`;
    const key = randomUUID();
    const capture = () =>
      call(sandbox, "POST", path, {
        token: shop.accessToken,
        body: { amount: "20.00" },
        headers: keyHeader(key),
      });
    expect((await capture()).status).toBe(202);
    expect((await capture()).status).toBe(202);
    expect(sandbox.orders()[0]).toMatchObject({ capturedAmount: "20.00", status: "PartActivated" });
    // Same key on another path is another scope.
    const refund = await call(sandbox, "POST", `/manage/orders/${created.json.data.orderId}/refund`, {
      token: shop.accessToken,
      body: { amount: "5.00" },
      headers: keyHeader(key),
    });
    expect(refund.status).toBe(202);
    sandbox.advanceClock(HOUR + 1);
    const late = await call(sandbox, "POST", path, {
      token: await accessToken(shop),
      body: { amount: "20.00" },
      headers: keyHeader(key),
    });
    expect(errorReasons(late)).toEqual(["IDEMPOTENCY_RESPONSE_EXPIRED"]);
  });

  it("are forgotten after 24 hours, so memory stays bounded", async () => {
    const shop = await openShop(sandbox);
    for (let i = 0; i < 5; i++) await authorize(sandbox, shop, {}, keyHeader(randomUUID()));
    expect(sandbox.stats().idempotencyKeys).toBe(5);
    sandbox.advanceClock(24 * HOUR);
    await authorize(sandbox, { ...shop, accessToken: await accessToken(shop) }, {}, keyHeader(randomUUID()));
    expect(sandbox.stats().idempotencyKeys).toBe(1);
  });
});

async function accessToken(shop: { merchant: { clientId: string; clientSecret: string; scope: string } }) {
  const response = await call(sandbox, "POST", "/oauth2/v2.0/token", {
    rawBody: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: shop.merchant.clientId,
      client_secret: shop.merchant.clientSecret,
      scope: shop.merchant.scope,
    }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  return response.json.access_token as string;
}
