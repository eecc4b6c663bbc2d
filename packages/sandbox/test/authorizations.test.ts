import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import {
  authorizationBody,
  authorize,
  call,
  errorReasons,
  GUID,
  type Json,
  openShop,
  type Shop,
} from "./helpers.js";

// Conformance with specification section 7 and the processing rules of supplement D.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const HOUR = 3600_000;

function eventsOf(type: string): Array<{ id: string; type: string; data: Json }> {
  return sandbox
    .events()
    .map(({ event }) => event)
    .filter((event) => event.type === type);
}

describe("create authorization: status codes", () => {
  it("202 with an authorizationId by default; one attempt as soon as possible, no clock move needed", async () => {
    const shop = await openShop(sandbox);
    const response = await authorize(sandbox, shop);
    expect(response.status).toBe(202);
    expect(response.json).toEqual({
      id: expect.stringMatching(GUID),
      data: { authorizationId: expect.stringMatching(GUID) },
    });
    await sandbox.settle();
    const [auth] = sandbox.authorizations();
    expect(auth).toMatchObject({
      authorizationId: response.json.data.authorizationId,
      status: "Succeeded",
      amount: "120.50",
      schedule: "asap",
      attempts: [{ attempt: 1, outcome: "succeeded", synchronous: false }],
    });
    const [succeeded] = eventsOf("authorization.succeeded");
    expect(succeeded?.data).toMatchObject({
      authorizationId: auth?.authorizationId,
      orderId: auth?.orderId,
      amount: "120.50",
      currency: "EUR",
      captureMode: "Auto",
      reference: "order-1",
    });
    expect(sandbox.orders()[0]).toMatchObject({ status: "Activated", capturedAmount: "120.50" });
  });

  it("200 with orderId for preferSynchronous when no challenge is needed", async () => {
    const shop = await openShop(sandbox);
    const response = await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
    expect(response.status).toBe(200);
    expect(response.json.data).toEqual({
      authorizationId: expect.stringMatching(GUID),
      orderId: expect.stringMatching(GUID),
    });
    const order = await call(sandbox, "GET", `/manage/orders/${response.json.data.orderId}`, {
      token: shop.accessToken,
    });
    expect(order.json.data).toMatchObject({ status: "Activated", totalAmount: "120.50" });
  });

  it("400 with one INVALID_REQUEST entry (field, rule) per problem", async () => {
    const shop = await openShop(sandbox);
    const response = await call(sandbox, "POST", "/purchase/authorizations", {
      token: shop.accessToken,
      body: {
        customerToken: "not-a-guid",
        order: {
          currency: "EUR",
          items: [{ id: "a", description: "b", unitPrice: "1.234", quantity: "0", vat: "25" }],
        },
      },
    });
    expect(response.status).toBe(400);
    expect(errorReasons(response)).toEqual(["INVALID_REQUEST", "INVALID_REQUEST", "INVALID_REQUEST"]);
    expect(response.json.error.errors).toEqual(
      expect.arrayContaining([
        {
          reason: "INVALID_REQUEST",
          field: "customerToken",
          rule: "guid",
          message: "customerToken must be a GUID",
        },
        expect.objectContaining({ field: "order.items[0].unitPrice", rule: "decimals" }),
        expect.objectContaining({ field: "order.items[0].quantity", rule: "min" }),
      ]),
    );
  });

  it("400 for missing required properties, null values (a type error) and a non-positive total", async () => {
    const shop = await openShop(sandbox);
    const missing = await call(sandbox, "POST", "/purchase/authorizations", {
      token: shop.accessToken,
      body: {},
    });
    expect(
      missing.json.error.errors.map((entry: { field: string; rule: string }) => [entry.field, entry.rule]),
    ).toEqual([
      ["customerToken", "required"],
      ["order", "required"],
    ]);
    const nulls = await authorize(sandbox, shop, { storeId: null });
    expect(nulls.json.error.errors).toEqual([expect.objectContaining({ field: "storeId", rule: "type" })]);
    const free = await authorize(sandbox, shop, {
      order: { items: [{ id: "a", description: "b", unitPrice: "0.00", quantity: "1", vat: "0" }] },
    });
    expect(free.json.error.errors).toEqual([
      expect.objectContaining({ field: "order.items", rule: "positive_total" }),
    ]);
  });

  it("ignores unknown fields", async () => {
    const shop = await openShop(sandbox);
    const response = await authorize(sandbox, shop, { somethingNew: { nested: true }, order: { extra: 1 } });
    expect(response.status).toBe(202);
  });

  it("401 for a missing, wrong or expired bearer token, with an empty errors array", async () => {
    const shop = await openShop(sandbox);
    const body = authorizationBody(shop.customerToken);
    const missing = await call(sandbox, "POST", "/purchase/authorizations", { body });
    const wrong = await call(sandbox, "POST", "/purchase/authorizations", { body, token: "not-a-token" });
    const otherScheme = await call(sandbox, "POST", "/purchase/authorizations", {
      body,
      headers: { authorization: `Basic ${shop.accessToken}` },
    });
    sandbox.advanceClock(HOUR);
    const expired = await call(sandbox, "POST", "/purchase/authorizations", {
      body,
      token: shop.accessToken,
    });
    for (const response of [missing, wrong, otherScheme, expired]) {
      expect(response.status).toBe(401);
      expect(errorReasons(response)).toEqual([]);
      expect(response.json.error.message).toBe("Unauthorized");
    }
    expect(sandbox.authorizations()).toEqual([]);
  });

  it("404 with an empty errors array for an unknown token or another merchant's token", async () => {
    const shop = await openShop(sandbox);
    const other = await openShop(sandbox);
    const unknown = await authorize(sandbox, {
      ...shop,
      customerToken: "00000000-0000-4000-8000-000000000000",
    });
    const notOwned = await authorize(sandbox, { ...shop, customerToken: other.customerToken });
    for (const response of [unknown, notOwned]) {
      expect(response.status).toBe(404);
      expect(errorReasons(response)).toEqual([]);
      expect(response.json.error.message).toBe("Not Found");
    }
  });

  it("422 INVALID_CURRENCY when the currency differs from the token's", async () => {
    const shop = await openShop(sandbox, { currency: "SEK" });
    const response = await authorize(sandbox, shop);
    expect(response.status).toBe(422);
    expect(errorReasons(response)).toEqual(["INVALID_CURRENCY"]);
    expect(response.json.error.errors[0].message).toEqual(expect.any(String));
  });

  const statusReasons = [
    ["Pending", "TOKEN_PENDING"],
    ["Denied", "TOKEN_DENIED"],
    ["Revoked", "TOKEN_REVOKED"],
    ["Cancelled", "TOKEN_CANCELLED"],
    ["PendingActivation", "PENDING_ACTIVATION"],
  ] as const;
  for (const [status, reason] of statusReasons) {
    it(`422 ${reason} for a ${status} token`, async () => {
      const shop = await openShop(sandbox, { status });
      const response = await authorize(sandbox, shop);
      expect(response.status).toBe(422);
      expect(errorReasons(response)).toEqual([reason]);
    });
  }

  it("422 PAYMENT_METHOD_NO_FUNDS synchronously; success reserves the funds", async () => {
    const shop = await openShop(sandbox, { funds: "200.00" });
    const sync = { attemptSchedule: { preferSynchronous: true } };
    expect((await authorize(sandbox, shop, sync)).status).toBe(200);
    expect(sandbox.getCustomerToken(shop.customerToken).funds).toBe("79.50");
    const second = await authorize(sandbox, shop, sync);
    expect(second.status).toBe(422);
    expect(errorReasons(second)).toEqual(["PAYMENT_METHOD_NO_FUNDS"]);
    expect(sandbox.authorizations({ status: "Failed" })).toHaveLength(1);
    expect(eventsOf("authorization.failed")).toEqual([]); // a synchronous failure is answered, not sent
  });

  it("422 PAYMENT_METHOD_EXPIRED and forced reasons synchronously", async () => {
    const expired = await openShop(sandbox, { paymentMethodExpired: true });
    const response = await authorize(sandbox, expired, { attemptSchedule: { preferSynchronous: true } });
    expect(errorReasons(response)).toEqual(["PAYMENT_METHOD_EXPIRED"]);
    const denied = await openShop(sandbox, { failureReason: "PAYMENT_DENIED" });
    const deniedResponse = await authorize(sandbox, denied, { attemptSchedule: { preferSynchronous: true } });
    expect(errorReasons(deniedResponse)).toEqual(["PAYMENT_DENIED"]);
  });

  it("503 SERVICE_UNAVAILABLE through a fault, with nothing processed", async () => {
    const shop = await openShop(sandbox);
    sandbox.injectFault({ kind: "unavailable", match: { path: "/purchase/authorizations" } });
    const response = await authorize(sandbox, shop);
    expect(response.status).toBe(503);
    expect(errorReasons(response)).toEqual(["SERVICE_UNAVAILABLE"]);
    expect(sandbox.authorizations()).toEqual([]);
    expect((await authorize(sandbox, shop)).status).toBe(202);
  });

  it("uses the token's store and capture mode when omitted, the request's when given", async () => {
    const shop = await openShop(sandbox, { storeId: "token-store", captureMode: "Manual" });
    await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
    await authorize(sandbox, shop, {
      storeId: "other-store",
      order: { captureMode: "Auto" },
      attemptSchedule: { preferSynchronous: true },
    });
    const [first, second] = sandbox.orders();
    expect(first).toMatchObject({ storeId: "token-store", captureMode: "Manual", status: "NotActivated" });
    expect(second).toMatchObject({ storeId: "other-store", captureMode: "Auto", status: "Activated" });
  });
});

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
    const [retrying] = eventsOf("authorization.retrying");
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
    const failed = eventsOf("authorization.failed").map((event) => event.data);
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
    expect(eventsOf("authorization.retrying")).toHaveLength(1);
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
    expect(eventsOf("authorization.failed")[0]?.data).toMatchObject({
      authorizationId: id,
      reason: "TOKEN_REVOKED",
    });
  });

  it("an asynchronous attempt without funds fails with PAYMENT_METHOD_NO_FUNDS by webhook", async () => {
    const shop = await openShop(sandbox, { funds: "10.00" });
    const id = await scheduled(shop, undefined);
    await sandbox.settle();
    expect(eventsOf("authorization.failed")[0]?.data).toMatchObject({
      authorizationId: id,
      reason: "PAYMENT_METHOD_NO_FUNDS",
      attempt: 1,
    });
  });
});
