import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  AuthenticationError,
  DeclinedError,
  InvalidRequestError,
  NotFoundError,
  OrderStateError,
  ValidationError,
} from "../src/index.js";
import { validRequest } from "./fixtures.js";
import { openShop, type SandboxServer, startSandbox, tokenRequestsOf } from "./sandbox-fixture.js";

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

describe("authorizations.create", () => {
  it("returns 200 with an order id when performed synchronously", async () => {
    const shop = openShop(sandbox);
    const result = await shop.client.authorizations.create(
      validRequest({ customerToken: shop.customerToken, attemptSchedule: { preferSynchronous: true } }),
    );
    expect(result.synchronous).toBe(true);
    expect(result.orderId).toMatch(/^[0-9a-f-]{36}$/);
    const [recorded] = sandbox.authorizations({ merchantId: shop.merchantId });
    expect(recorded).toMatchObject({
      authorizationId: result.authorizationId,
      idempotencyKey: result.idempotencyKey,
      amount: "49.80",
    });
    expect(sandbox.orders({ merchantId: shop.merchantId })[0]).toMatchObject({
      orderId: result.orderId,
      status: "Activated",
    });
  });

  it("returns 202 without an order id when accepted for asynchronous processing", async () => {
    const shop = openShop(sandbox);
    const result = await shop.client.authorizations.create(
      validRequest({ customerToken: shop.customerToken }),
    );
    expect(result).toMatchObject({ synchronous: false });
    expect(result.orderId).toBeUndefined();
    await sandbox.settle();
    expect(sandbox.authorizations({ merchantId: shop.merchantId })[0]?.status).toBe("Succeeded");
  });

  it("sends exact decimal strings for amounts given as numbers", async () => {
    const shop = openShop(sandbox);
    await shop.client.authorizations.create({
      customerToken: shop.customerToken,
      order: {
        currency: "eur",
        items: [{ id: "a", description: "A", unitPrice: 0.1, quantity: 3, vat: 25 }],
      },
      attemptSchedule: { preferSynchronous: true },
    });
    expect(sandbox.authorizations({ merchantId: shop.merchantId })[0]?.amount).toBe("0.30");
  });

  it.each([
    ["Revoked", "TOKEN_REVOKED"],
    ["Denied", "TOKEN_DENIED"],
    ["Pending", "TOKEN_PENDING"],
    ["Cancelled", "TOKEN_CANCELLED"],
    ["PendingActivation", "PENDING_ACTIVATION"],
  ] as const)("declines a %s token with %s, once, without retrying", async (status, reason) => {
    const shop = openShop(sandbox);
    const token = shop.token({ status });
    const before = sandbox.stats().requests;
    const error = await shop.client.authorizations
      .create(validRequest({ customerToken: token }))
      .catch((e) => e);
    expect(DeclinedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 422, reason, outcome: "refused", retry: "no" });
    expect(error.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(error.message).toContain(reason);
    // One token request and one create: a definite answer is never retried.
    expect(sandbox.stats().requests - before).toBe(2);
  });

  it("declines a currency mismatch and a synchronous attempt without funds", async () => {
    const shop = openShop(sandbox);
    const sek = shop.token({ currency: "SEK" });
    await expect(
      shop.client.authorizations.create(validRequest({ customerToken: sek })),
    ).rejects.toMatchObject({
      name: "DeclinedError",
      reason: "INVALID_CURRENCY",
    });
    const poor = shop.token({ funds: "10.00" });
    const error = await shop.client.authorizations
      .create(validRequest({ customerToken: poor, attemptSchedule: { preferSynchronous: true } }))
      .catch((e) => e);
    expect(error).toMatchObject({ name: "DeclinedError", reason: "PAYMENT_METHOD_NO_FUNDS", status: 422 });
  });

  it("reports a token of another merchant as not found", async () => {
    const shop = openShop(sandbox);
    const other = openShop(sandbox);
    const error = await shop.client.authorizations
      .create(validRequest({ customerToken: other.customerToken }))
      .catch((e) => e);
    expect(NotFoundError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 404, reasons: [] });
  });

  it("rejects an invalid request before any network call", async () => {
    const shop = openShop(sandbox);
    const before = sandbox.stats().requests;
    const request = validRequest({ customerToken: shop.customerToken });
    request.order.items[0]!.vat = "101";
    await expect(shop.client.authorizations.create(request)).rejects.toBeInstanceOf(ValidationError);
    await expect(
      shop.client.authorizations.create(validRequest({ customerToken: shop.customerToken }), {
        idempotencyKey: "order-1",
      }),
    ).rejects.toThrow("idempotencyKey must be a GUID");
    expect(sandbox.stats().requests).toBe(before);
  });

  it("replays the stored outcome for a repeated idempotency key: one authorization", async () => {
    const shop = openShop(sandbox);
    const request = validRequest({
      customerToken: shop.customerToken,
      attemptSchedule: { preferSynchronous: true },
    });
    const first = await shop.client.authorizations.create(request);
    const second = await shop.client.authorizations.create(request, { idempotencyKey: first.idempotencyKey });
    expect(second).toEqual(first);
    expect(sandbox.authorizations({ merchantId: shop.merchantId })).toHaveLength(1);
  });
});

describe("authentication", () => {
  it("makes one token request for 1,000 concurrent first calls", async () => {
    const shop = openShop(sandbox);
    const results = await Promise.all(
      Array.from({ length: 1000 }, () => shop.client.customerTokens.get(shop.customerToken)),
    );
    expect(results.every((token) => token.status === "Active")).toBe(true);
    expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(1);
  });

  it("refreshes ahead of expiry in the background and after expiry in the foreground", async () => {
    const shop = openShop(sandbox, { now: () => sandbox.now() });
    await shop.client.customerTokens.get(shop.customerToken);
    sandbox.advanceClock(58.5 * 60_000); // inside the 2-minute refresh margin of a 1-hour token
    await shop.client.customerTokens.get(shop.customerToken);
    await sandbox.settle();
    await vi.waitFor(() => expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(2), { timeout: 10_000 });
    sandbox.advanceClock(61 * 60_000); // the refreshed token has expired too
    await shop.client.customerTokens.get(shop.customerToken);
    expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(3);
  });

  it("recovers from a 401 with one refresh shared by all callers", async () => {
    const shop = openShop(sandbox);
    await shop.client.customerTokens.get(shop.customerToken);
    sandbox.revokeAccessTokens({ clientId: shop.clientId });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => shop.client.customerTokens.get(shop.customerToken)),
    );
    expect(results).toHaveLength(50);
    expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(2);
  });

  it("turns token endpoint refusals into AuthenticationError with the OAuth code", async () => {
    const shop = openShop(sandbox);
    const { PurchaseAuthClient } = await import("../src/index.js");
    const wrongSecret = new PurchaseAuthClient({ ...shop.credentials, clientSecret: "wrong" });
    const error = await wrongSecret.customerTokens.get(shop.customerToken).catch((e) => e);
    expect(AuthenticationError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ oauthError: "invalid_client", status: 401 });
    expect(JSON.stringify(error)).not.toContain(shop.clientSecret);

    const wrongScope = new PurchaseAuthClient({ ...shop.credentials, scope: "api://other/.default" });
    await expect(wrongScope.customerTokens.get(shop.customerToken)).rejects.toMatchObject({
      oauthError: "invalid_scope",
    });
  });
});

describe("orders", () => {
  /** A synchronous manual-capture authorization of 49.80: an order with nothing captured yet. */
  async function authorizedManualOrder() {
    const shop = openShop(sandbox);
    const { orderId } = await shop.client.authorizations.create(
      validRequest({
        customerToken: shop.customerToken,
        order: { ...validRequest().order, captureMode: "Manual" },
        attemptSchedule: { preferSynchronous: true },
      }),
    );
    return { shop, orderId };
  }

  it("captures in parts, refunds in parts and reads the order back", async () => {
    const { shop, orderId } = await authorizedManualOrder();
    expect((await shop.client.orders.get(orderId!)).status).toBe("NotActivated");
    await shop.client.orders.capture(orderId!, { amount: 20 });
    expect(await shop.client.orders.get(orderId!)).toMatchObject({
      status: "PartActivated",
      capturedAmount: "20.00",
    });
    await shop.client.orders.capture(orderId!);
    expect(await shop.client.orders.get(orderId!)).toMatchObject({
      status: "Activated",
      capturedAmount: "49.80",
    });
    await shop.client.orders.refund(orderId!, { amount: "9.80" });
    expect(await shop.client.orders.get(orderId!)).toMatchObject({
      status: "PartReturned",
      refundedAmount: "9.80",
    });
    const tooMuch = await shop.client.orders.refund(orderId!, { amount: "40.01" }).catch((e) => e);
    expect(OrderStateError.isInstance(tooMuch)).toBe(true);
    expect(tooMuch.reason).toBe("AMOUNT_EXCEEDS_REMAINING");
    const notAllowed = await shop.client.orders.capture(orderId!).catch((e) => e);
    expect(notAllowed).toMatchObject({ name: "OrderStateError", reason: "INVALID_ORDER_STATE" });
  });

  it("cancels the uncaptured remainder", async () => {
    const { shop, orderId } = await authorizedManualOrder();
    await shop.client.orders.cancel(orderId!);
    expect(await shop.client.orders.get(orderId!)).toMatchObject({
      status: "Cancelled",
      cancelledAmount: "49.80",
    });
  });

  it("validates order write input before sending", async () => {
    const shop = openShop(sandbox);
    const orderId = "0f8fad5b-d9cb-469f-a165-70867728950e";
    await expect(shop.client.orders.refund(orderId, { amount: "1.001" })).rejects.toThrow(
      "amount must have at most 2 decimals",
    );
    await expect(shop.client.orders.capture("42")).rejects.toThrow("orderId must be a GUID");
    await expect(shop.client.orders.get(orderId)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("names a missing input or options object instead of failing on it, before sending", async () => {
    const shop = openShop(sandbox);
    const orderId = "0f8fad5b-d9cb-469f-a165-70867728950e";
    const before = sandbox.stats().requests;
    const untyped = shop.client as unknown as {
      orders: {
        refund(id: string, input?: unknown): Promise<unknown>;
        capture(id: string, input: unknown): Promise<unknown>;
      };
      authorizations: { create(request: unknown, options: unknown): Promise<unknown> };
    };
    // Called from JavaScript, or with a value typed `any`: each was a TypeError naming no field.
    const errors = await Promise.all([
      untyped.orders.refund(orderId).catch((error: unknown) => error),
      untyped.orders.capture(orderId, null).catch((error: unknown) => error),
      untyped.authorizations
        .create(validRequest({ customerToken: shop.customerToken }), null)
        .catch((error: unknown) => error),
    ]);
    for (const error of errors) expect(ValidationError.isInstance(error)).toBe(true);
    expect((errors[2] as ValidationError).issues[0]).toMatchObject({ path: "options", rule: "type" });
    const resent = await (
      shop.client as unknown as { resendUnknownWrite(w: unknown, o: unknown): Promise<unknown> }
    )
      .resendUnknownWrite(
        {
          operation: "orders.cancel",
          method: "POST",
          path: `/manage/orders/${orderId}/cancel`,
          body: "{}",
          idempotencyKey: orderId,
          firstSentAt: new Date().toISOString(),
        },
        null,
      )
      .catch((error: unknown) => error);
    expect((resent as ValidationError).issues?.[0]).toMatchObject({ path: "options", rule: "type" });
    expect(sandbox.stats().requests).toBe(before);
  });

  it("refuses a firstSentAt without the key it was first sent with, before sending", async () => {
    const shop = openShop(sandbox);
    const before = sandbox.stats().requests;
    const error = await shop.client.authorizations
      .create(validRequest({ customerToken: shop.customerToken }), { firstSentAt: new Date() })
      .catch((caught: unknown) => caught);
    expect((error as ValidationError).issues?.[0]).toMatchObject({
      path: "idempotencyKey",
      rule: "required",
    });
    expect(sandbox.stats().requests).toBe(before);
  });
});

describe("customer tokens", () => {
  it("reads and cancels a token; later charges are declined with TOKEN_CANCELLED", async () => {
    const shop = openShop(sandbox);
    expect(await shop.client.customerTokens.get(shop.customerToken)).toMatchObject({
      status: "Active",
      currency: "EUR",
    });
    await shop.client.customerTokens.cancel(shop.customerToken);
    expect((await shop.client.customerTokens.get(shop.customerToken)).status).toBe("Cancelled");
    await expect(
      shop.client.authorizations.create(validRequest({ customerToken: shop.customerToken })),
    ).rejects.toMatchObject({
      reason: "TOKEN_CANCELLED",
    });
  });

  it("reports an invalid request from the service with its reasons", async () => {
    // The client validates first; this shows the service's own 400 reaches callers intact when a
    // deployment is stricter than this client (here: a path override that sends a bad body).
    const shop = openShop(sandbox, { paths: { refundOrder: "/purchase/authorizations" } });
    const error = await shop.client.orders
      .refund("0f8fad5b-d9cb-469f-a165-70867728950e", { amount: "1.00" })
      .catch((e) => e);
    expect(InvalidRequestError.isInstance(error)).toBe(true);
    expect(error.reasons.length).toBeGreaterThan(0);
    expect(error.reasons[0]).toMatchObject({ reason: "INVALID_REQUEST" });
  });
});
