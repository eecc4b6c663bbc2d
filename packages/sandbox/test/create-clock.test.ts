import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { accessTokenFor, authorize, openShop, type Shop } from "./helpers.js";

// A create reads the clock once for its checks and once after any latency wait, for everything it
// records: a clock moved during the wait is seen by all of it, and the replay hour counts from it.
let sandbox: SandboxServer;
let shop: Shop;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  sandbox.reset();
  shop = await openShop(sandbox);
});

describe("a create whose latency wait outlasts a clock move", () => {
  it("records the post-wait time everywhere, and the replay hour counts from it", async () => {
    sandbox.injectFault({
      kind: "latency",
      latencyMs: 300,
      match: { method: "POST", path: "/purchase/authorizations" },
    });
    const key = randomUUID();
    const before = sandbox.now();
    const pending = authorize(
      sandbox,
      shop,
      { attemptSchedule: { preferSynchronous: true } },
      { "Service-Idempotency-Key": key },
    );
    await new Promise((r) => setTimeout(r, 100));
    sandbox.advanceClock(2 * 3600_000);
    const response = await pending;
    expect(response.status).toBe(200);
    const [auth] = sandbox.authorizations();
    const createdAt = Date.parse(auth!.createdAt as unknown as string);
    expect(createdAt).toBeGreaterThanOrEqual(before + 2 * 3600_000);
    const [order] = sandbox.orders();
    expect(Date.parse(order!.createdAt as unknown as string)).toBe(createdAt);
    const attempt = sandbox.attempts()[0]!;
    expect(Date.parse(attempt.at)).toBe(createdAt);
    for (const event of sandbox.events()) expect(Date.parse(event.event.createdAt)).toBe(createdAt);
    expect(response.json.data.orderId).toBe(order!.orderId);
    expect(response.json.data.authorizationId).toBe(auth!.authorizationId);

    // Replay within the hour (counted from the post-wait time), then expired after it.
    sandbox.advanceClock(3600_000 - 5_000);
    shop = { ...shop, accessToken: await accessTokenFor(sandbox, shop.merchant) };
    const replay = await authorize(
      sandbox,
      shop,
      { attemptSchedule: { preferSynchronous: true } },
      { "Service-Idempotency-Key": key },
    );
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(response.text);
    sandbox.advanceClock(10_000);
    const expired = await authorize(
      sandbox,
      shop,
      { attemptSchedule: { preferSynchronous: true } },
      { "Service-Idempotency-Key": key },
    );
    expect(expired.status).toBe(422);
  });
});
