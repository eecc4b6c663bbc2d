import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { authorize, eventsOf, openShop, type Shop } from "./helpers.js";

// Attempt schedules (specification 2.4, supplement D): none or empty, relative, absolute, retries.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const HOUR = 3600_000;

describe("attempt schedules", () => {
  async function scheduled(shop: Shop, attemptSchedule: unknown) {
    const response = await authorize(sandbox, shop, { attemptSchedule });
    expect(response.status).toBe(202);
    return response.json.data.authorizationId as string;
  }
  const authorization = (id: string) => sandbox.authorizations().find((auth) => auth.authorizationId === id);

  it.each([
    ["1.00:00:10", 86_410_000],
    ["100.00:00:00", 8_640_000_000],
    ["00:00:10", 10_000],
  ])(
    "relative %s, a form the service's own parser accepts, runs %d ms after creation",
    async (timespan, ms) => {
      const shop = await openShop(sandbox);
      const id = await scheduled(shop, { relative: [timespan] });
      sandbox.advanceClock(ms - 1_000);
      await sandbox.settle();
      expect(authorization(id)?.attempts).toEqual([]);
      sandbox.advanceClock(1_000);
      await sandbox.settle();
      expect(authorization(id)).toMatchObject({ status: "Succeeded", attempts: [{ attempt: 1 }] });
    },
  );

  it.each([
    ["relative", { relative: [] }],
    ["absolute", { absolute: [] }],
  ])("an empty %s schedule is one attempt as soon as possible", async (_kind, schedule) => {
    const shop = await openShop(sandbox);
    const id = await scheduled(shop, schedule);
    await sandbox.settle();
    expect(authorization(id)).toMatchObject({ status: "Succeeded", maxAttempts: 1 });
  });

  it("relative: each attempt a delay after the previous one; a worth-retrying failure moves on", async () => {
    const shop = await openShop(sandbox, { failNextAttempts: ["PAYMENT_FAILED"] });
    const id = await scheduled(shop, { relative: ["00.01:00:00", "00.02:00:00"] });
    const createdAt = Date.parse(authorization(id)?.createdAt ?? "");
    await sandbox.settle();
    expect(authorization(id)?.attempts).toEqual([]);

    sandbox.advanceClock(HOUR);
    await sandbox.settle();
    expect(authorization(id)).toMatchObject({
      status: "Scheduled",
      attempts: [{ outcome: "failed", reason: "PAYMENT_FAILED" }],
    });
    const [retrying] = eventsOf(sandbox, "authorization.retrying");
    expect(retrying?.data).toEqual({
      authorizationId: id,
      customerToken: shop.customerToken,
      reason: "PAYMENT_FAILED",
      attempt: 1,
      maxAttempts: 2,
      nextAttemptAt: expect.any(String),
    });
    const nextAt = Date.parse(String(retrying?.data.nextAttemptAt));
    expect(nextAt - createdAt).toBeGreaterThanOrEqual(3 * HOUR);
    expect(nextAt - createdAt).toBeLessThan(3 * HOUR + 1000);

    sandbox.advanceClock(2 * HOUR - 60_000);
    await sandbox.settle();
    expect(authorization(id)?.attempts).toHaveLength(1);
    sandbox.advanceClock(60_000);
    await sandbox.settle();
    expect(authorization(id)).toMatchObject({
      status: "Succeeded",
      attempts: [{ attempt: 1 }, { attempt: 2, outcome: "succeeded" }],
    });
  });

  it("relative in one big clock move: follow-up attempts run at their own due times", async () => {
    const shop = await openShop(sandbox, { failNextAttempts: ["SERVICE_UNAVAILABLE", "PAYMENT_FAILED"] });
    const id = await scheduled(shop, { relative: ["00.00:10:00", "00.00:10:00", "00.00:10:00"] });
    sandbox.advanceClock(HOUR);
    await sandbox.settle();
    const attempts = authorization(id)?.attempts ?? [];
    expect(attempts.map((attempt) => attempt.outcome)).toEqual(["failed", "failed", "succeeded"]);
    const times = attempts.map((attempt) => Date.parse(attempt.at));
    for (const [earlier, later] of [
      [times[0]!, times[1]!],
      [times[1]!, times[2]!],
    ]) {
      // The clock keeps running in real time while a job runs, hence the small tolerance.
      expect(later! - earlier!).toBeGreaterThanOrEqual(10 * 60_000);
      expect(later! - earlier!).toBeLessThan(10 * 60_000 + 1000);
    }
  });

  it("the last attempt failing, or a reason not worth retrying, ends it with authorization.failed", async () => {
    const retrying = await openShop(sandbox, { failureReason: "PAYMENT_FAILED" });
    const exhausted = await scheduled(retrying, { relative: ["00.00:01:00", "00.00:01:00"] });
    const denied = await openShop(sandbox, { failureReason: "PAYMENT_DENIED" });
    const final = await scheduled(denied, { relative: ["00.00:01:00", "00.00:01:00", "00.00:01:00"] });
    sandbox.advanceClock(HOUR);
    await sandbox.settle();
    expect(authorization(exhausted)).toMatchObject({ status: "Failed", failureReason: "PAYMENT_FAILED" });
    expect(authorization(exhausted)?.attempts).toHaveLength(2);
    expect(authorization(final)?.attempts).toHaveLength(1);
    const failed = eventsOf(sandbox, "authorization.failed").map((event) => event.data);
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          authorizationId: exhausted,
          reason: "PAYMENT_FAILED",
          attempt: 2,
          reference: "order-1",
        }),
        expect.objectContaining({ authorizationId: final, reason: "PAYMENT_DENIED", attempt: 1 }),
      ]),
    );
    expect(eventsOf(sandbox, "authorization.retrying")).toHaveLength(1);
  });

  it("absolute: each attempt at its time; a time in the past runs as soon as possible", async () => {
    const shop = await openShop(sandbox, { failNextAttempts: ["PAYMENT_FAILED"] });
    const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+00:00");
    const past = iso(sandbox.now() - HOUR);
    const future = iso(sandbox.now() + 5 * HOUR);
    const id = await scheduled(shop, { absolute: [past, future] });
    await sandbox.settle();
    expect(authorization(id)?.attempts).toEqual([expect.objectContaining({ outcome: "failed" })]);
    expect(authorization(id)?.nextAttemptAt).toBe(new Date(Date.parse(future)).toISOString());
    sandbox.advanceClock(4 * HOUR);
    await sandbox.settle();
    expect(authorization(id)?.attempts).toHaveLength(1);
    sandbox.advanceClock(HOUR);
    await sandbox.settle();
    expect(authorization(id)?.status).toBe("Succeeded");
  });

  it("an empty schedule is one attempt as soon as possible", async () => {
    const shop = await openShop(sandbox);
    const id = await scheduled(shop, {});
    await sandbox.settle();
    expect(authorization(id)).toMatchObject({ schedule: "asap", status: "Succeeded" });
  });

  it("preferSynchronous with a challenge needed: 202 and an asynchronous attempt", async () => {
    const shop = await openShop(sandbox, { needsChallenge: true });
    const response = await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
    expect(response.status).toBe(202);
    expect(response.json.data.orderId).toBeUndefined();
    await sandbox.settle();
    expect(sandbox.authorizations()[0]).toMatchObject({
      status: "Succeeded",
      attempts: [{ synchronous: false }],
    });
  });

  it("400 one_schedule when more than one form is set", async () => {
    const shop = await openShop(sandbox);
    const response = await authorize(sandbox, shop, {
      attemptSchedule: { relative: ["00.00:01:00"], preferSynchronous: true },
    });
    expect(response.status).toBe(400);
    expect(response.json.error.errors).toEqual([expect.objectContaining({ rule: "one_schedule" })]);
  });

  it("checks the token again at attempt time: revoked before the attempt → TOKEN_REVOKED by webhook", async () => {
    const shop = await openShop(sandbox);
    const id = await scheduled(shop, { relative: ["00.00:30:00"] });
    sandbox.setCustomerTokenStatus(shop.customerToken, "Revoked");
    sandbox.advanceClock(HOUR);
    await sandbox.settle();
    expect(authorization(id)).toMatchObject({ status: "Failed", failureReason: "TOKEN_REVOKED" });
    expect(eventsOf(sandbox, "authorization.failed")[0]?.data).toMatchObject({
      authorizationId: id,
      reason: "TOKEN_REVOKED",
    });
  });

  it("an asynchronous attempt without funds fails with PAYMENT_METHOD_NO_FUNDS by webhook", async () => {
    const shop = await openShop(sandbox, { funds: "10.00" });
    const id = await scheduled(shop, undefined);
    await sandbox.settle();
    expect(eventsOf(sandbox, "authorization.failed")[0]?.data).toMatchObject({
      authorizationId: id,
      reason: "PAYMENT_METHOD_NO_FUNDS",
      attempt: 1,
    });
  });
});
