import { describe, expect, it } from "vitest";
import { SHOPPER_MESSAGES } from "../src/index.js";
import { call, charge, createShopData, useShops } from "./support/shop.js";

// Every decline the sandbox can produce, synchronous (the 422 answer) and asynchronous (the
// authorization.failed webhook), mapped to its shopper message.

const shops = useShops();
const { shop } = shops;

type TokenSetup = Parameters<ReturnType<typeof createShopData>["customer"]>[0];

const SYNCHRONOUS_DECLINES: Array<
  [reason: keyof typeof SHOPPER_MESSAGES, token: TokenSetup, retryable: boolean]
> = [
  ["TOKEN_PENDING", { status: "Pending" }, false],
  ["TOKEN_DENIED", { status: "Denied" }, false],
  ["TOKEN_REVOKED", { status: "Revoked" }, false],
  ["TOKEN_CANCELLED", { status: "Cancelled" }, false],
  ["PENDING_ACTIVATION", { status: "PendingActivation" }, false],
  ["INVALID_CURRENCY", { currency: "USD" }, false],
  ["PAYMENT_METHOD_NO_FUNDS", { funds: "10.00" }, false],
  ["PAYMENT_METHOD_EXPIRED", { paymentMethodExpired: true }, false],
  ["PAYMENT_DENIED", { failureReason: "PAYMENT_DENIED" }, false],
  ["PAYMENT_FAILED", { failureReason: "PAYMENT_FAILED" }, true],
  ["SERVICE_UNAVAILABLE", { failureReason: "SERVICE_UNAVAILABLE" }, true],
];

describe("synchronous declines", () => {
  it.each(SYNCHRONOUS_DECLINES)(
    "%s: 422 problem with the shopper message",
    async (reason, token, retryable) => {
      const { data, app } = await shop();
      const customer = data.customer(token);
      const cartId = data.cart(customer);

      const reply = await charge(app, customer, { cartId });

      expect(reply.status).toBe(422);
      expect(reply.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(reply.json).toEqual({
        type: "urn:purchase-auth:problem:payment-declined",
        title: retryable ? "Payment failed" : "Payment declined",
        status: 422,
        detail: SHOPPER_MESSAGES[reason],
        reason,
        retryable,
      });
      expect(await app.router.store.findByReference(data.referenceOf(cartId))).toMatchObject({
        status: "failed",
        reason,
      });
    },
  );

  it("TOKEN_REVOKED reads as the shop would say it", async () => {
    const { data, app } = await shop();
    const customer = data.customer({ status: "Revoked" });
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    expect(reply.json.detail).toBe(
      "Your saved payment method has been revoked. Please choose another payment method.",
    );
  });

  it("a customer token the merchant does not own: 422 'payment method not found'", async () => {
    const { data, app } = await shop();
    const stranger = createShopData(shops.sandbox()).customer(); // a token of another merchant
    const customer = { ...data.customer(), customerToken: stranger.customerToken };
    data.customers.set(customer.session, customer);
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    expect(reply.status).toBe(422);
    expect(reply.json).toMatchObject({
      type: "urn:purchase-auth:problem:payment-method-not-found",
      reason: "CUSTOMER_TOKEN_NOT_FOUND",
      detail: SHOPPER_MESSAGES.CUSTOMER_TOKEN_NOT_FOUND,
    });
  });

  it("after a decline, paying again is a new attempt with a new idempotency key", async () => {
    const { data, app } = await shop();
    const customer = data.customer({ funds: "1.00" });
    const cartId = data.cart(customer);
    expect((await charge(app, customer, { cartId })).status).toBe(422);

    shops.sandbox().updateCustomerToken(customer.customerToken, { funds: null }); // the customer topped up
    const again = await charge(app, customer, { cartId });

    expect(again.status).toBe(201);
    expect(again.json.status).toBe("captured");
    const attempts = shops.sandbox().authorizations({ merchantId: data.merchant.merchantId });
    expect(attempts.map((authorization) => authorization.status)).toEqual(["Failed", "Succeeded"]);
    expect(new Set(attempts.map((authorization) => authorization.idempotencyKey)).size).toBe(2);
    expect(await app.router.store.findByReference(data.referenceOf(cartId))).toMatchObject({ attempt: 2 });
  });
});

describe("asynchronous declines, by webhook", () => {
  it("no funds: pending, then failed with the shopper message on the status route", async () => {
    const { data, app } = await shop({ timing: "asap" });
    const customer = data.customer({ funds: "0.00" });
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    expect(reply.json.status).toBe("pending");

    await shops.sandbox().settle();

    const status = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(status.json).toMatchObject({
      status: "failed",
      reason: "PAYMENT_METHOD_NO_FUNDS",
      message: SHOPPER_MESSAGES.PAYMENT_METHOD_NO_FUNDS,
    });
  });

  it("a token revoked between acceptance and the scheduled attempt: TOKEN_REVOKED", async () => {
    const { data, app } = await shop({
      timing: "scheduled",
      schedules: { later: ["00.00:30:00"] },
      schedule: "later",
    });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    expect(reply.json.status).toBe("pending");
    shops.sandbox().setCustomerTokenStatus(customer.customerToken, "Revoked");

    shops.sandbox().advanceClock(30 * 60_000);
    await shops.sandbox().settle();

    const status = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(status.json).toMatchObject({
      status: "failed",
      reason: "TOKEN_REVOKED",
      message: SHOPPER_MESSAGES.TOKEN_REVOKED,
    });
  });

  it("a technical failure retried on the schedule: retrying keeps it pending, then it succeeds", async () => {
    const { data, app } = await shop({
      timing: "scheduled",
      schedules: { twice: ["00.00:10:00", "00.00:10:00"] },
      schedule: "twice",
    });
    const customer = data.customer({ failNextAttempts: ["PAYMENT_FAILED"] });
    const reply = await charge(app, customer, { cartId: data.cart(customer) });

    shops.sandbox().advanceClock(10 * 60_000);
    await shops.sandbox().settle();
    const retrying = await app.router.store.findByAuthorizationId(reply.json.authorizationId);
    expect(retrying).toMatchObject({ status: "pending", reason: "PAYMENT_FAILED" });
    const shown = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(shown.json.status).toBe("pending");
    expect(shown.json.reason).toBeUndefined(); // a retry's reason is not a decline

    shops.sandbox().advanceClock(10 * 60_000);
    await shops.sandbox().settle();
    const done = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(done.json.status).toBe("captured");
  });
});
