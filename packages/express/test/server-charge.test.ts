import { randomBytes } from "node:crypto";
import { DeclinedError, OutcomeUnknownError } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import type { BuiltOrder } from "../src/index.js";
import { call, PRICES, useShops } from "./support/shop.js";

// router.charge(): a merchant-initiated charge from the server (a re-order, a renewal), no browser.
// It must share everything with POST /charges: the store (the shopper reads it on the status
// route), the keys, the webhooks and the reconciler.

const shops = useShops();
const { shop } = shops;

/** A monthly re-order the server builds from its own records. */
function reorder(quantity = 1): BuiltOrder {
  return {
    reference: `reorder-${randomBytes(5).toString("hex")}`,
    currency: "EUR",
    items: [{ id: "beans-1kg", ...PRICES["beans-1kg"]!, quantity }],
  };
}

describe("router.charge: a server-side charge of a stored token", () => {
  it("charges once, however often it is called, and the customer sees it on the status route", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const order = reorder(2);

    const first = await app.router.charge({ customer, order });
    expect(first).toMatchObject({ started: true, charge: { status: "captured", amount: "49.80" } });
    const again = await app.router.charge({ customer, order });
    expect(again).toMatchObject({
      started: false,
      charge: { authorizationId: first.charge.authorizationId },
    });
    const authorizations = data.sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(authorizations).toHaveLength(1);
    expect(authorizations[0]).toMatchObject({
      reference: order.reference,
      amount: "49.80",
      status: "Succeeded",
    });

    const status = await call(app, "GET", `/charges/${first.charge.authorizationId}`, { customer });
    expect(status.json).toMatchObject({ reference: order.reference, status: "captured" });
  });

  it("a lost answer throws OutcomeUnknownError and the reconciler finishes the charge with its key", async () => {
    const { data, app } = await shop({
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      clientOptions: { maxRetries: 1 },
    });
    const customer = data.customer();
    const order = reorder();
    data.sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    const lost = await app.router.charge({ customer, order }).catch((error: unknown) => error);
    data.sandbox.clearFaults();
    expect(OutcomeUnknownError.isInstance(lost)).toBe(true);
    expect(await app.router.store.findByReference(order.reference!)).toMatchObject({ status: "pending" });

    await app.router.reconcile();
    const [authorization] = data.sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(await app.router.store.findByReference(order.reference!)).toMatchObject({
      status: "captured",
      authorizationId: authorization!.authorizationId,
    });
    expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("an accepted charge (202) is finished by the service's webhook", async () => {
    const { data, app } = await shop();
    const customer = data.customer({ needsChallenge: true });
    const order = reorder();
    const accepted = await app.router.charge({ customer, order, timing: "asap" });
    expect(accepted).toMatchObject({ started: true, charge: { status: "pending" } });
    await data.sandbox.settle();
    expect(await app.router.store.findByReference(order.reference!)).toMatchObject({ status: "captured" });
  });

  it("a decline is recorded and thrown; the next call is a new attempt with a new key", async () => {
    const { data, app } = await shop();
    const customer = data.customer({ failNextAttempts: ["PAYMENT_FAILED"] });
    const order = reorder();
    const declined = await app.router.charge({ customer, order }).catch((error: unknown) => error);
    expect(DeclinedError.isInstance(declined)).toBe(true);
    expect((declined as DeclinedError).retry).toBe("new-attempt");
    expect(await app.router.store.findByReference(order.reference!)).toMatchObject({
      status: "failed",
      reason: "PAYMENT_FAILED",
    });

    const retried = await app.router.charge({ customer, order });
    expect(retried).toMatchObject({ started: true, charge: { status: "captured" } });
    const keys = data.sandbox
      .authorizations({ merchantId: data.merchant.merchantId })
      .map((authorization) => authorization.idempotencyKey);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
  });

  it("of two calls after a decline, only the one that started the next attempt says so", async () => {
    const { data, app } = await shop();
    const customer = data.customer({ failNextAttempts: ["PAYMENT_FAILED"] });
    const order = reorder();
    await app.router.charge({ customer, order }).catch(() => undefined);
    const [a, b] = await Promise.all([
      app.router.charge({ customer, order }),
      app.router.charge({ customer, order }),
    ]);
    expect(a.charge.authorizationId).toBe(b.charge.authorizationId);
    expect([a.started, b.started].filter(Boolean)).toHaveLength(1);
    // Attempt 1 declined, attempt 2 once.
    expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(2);
  });

  it("refuses a wrong field by name before anything is sent", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const requests = data.sandbox.stats().requests;
    await expect(
      app.router.charge({ customer: { ...customer, customerToken: "not-a-token" }, order: reorder() }),
    ).rejects.toThrow(/customer\.customerToken/);
    await expect(app.router.charge({ customer, order: reorder(), timing: "later" as never })).rejects.toThrow(
      /timing must be one of/,
    );
    await expect(app.router.charge({ customer, order: { ...reorder(), reference: "" } })).rejects.toThrow(
      /reference/,
    );
    expect(data.sandbox.stats().requests).toBe(requests);
  });
});
