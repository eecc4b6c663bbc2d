import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { authorizationBody, authorize, call, errorReasons, eventsOf, GUID, openShop } from "./helpers.js";

// Conformance with specification section 7 and the processing rules of supplement D.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const HOUR = 3600_000;

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
    const [succeeded] = eventsOf(sandbox, "authorization.succeeded");
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
    expect(eventsOf(sandbox, "authorization.failed")).toEqual([]); // a synchronous failure is answered, not sent
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
