import { randomUUID } from "node:crypto";
import { PurchaseAuthClient, type WebhookEvent } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import { authorizationSucceeded, chargesOn, pendingCharge, signedEvent } from "./support/charges-kit.js";
import { charge, PRICES, useShops, WEBHOOK_SECRET } from "./support/shop.js";

// An authorization.succeeded matched by reference while the charge's attempt holds no id yet is
// adopted only if it can be the attempt's own: another customer token than the attempt's create
// call, another currency or capture mode make it another order's. Such an authorization, or one
// the charge does not hold, is alerted once, remembered on the charge as not its own, and applied
// like any event (onEvent runs). (Found by review; it was adopted before.)

/** A pending attempt 1 (no id yet) whose create call is recorded, on a store of its own. */
async function pendingAttempt(captureMode: "Auto" | "Manual" = "Auto") {
  const seen: WebhookEvent[] = [];
  const kit = chargesOn(new MemoryChargeStore(), { onEvent: (event) => void seen.push(event) });
  const customerToken = randomUUID();
  const charge = pendingCharge({ captureMode });
  const { reference } = charge;
  const pendingAuthorization = () => ({
    idempotencyKey: randomUUID(),
    request: { customerToken, order: { items: [], currency: "EUR", reference, captureMode } } as never,
    firstSentAt: new Date().toISOString(),
  });
  await kit.store.create({ ...charge, pendingAuthorization: pendingAuthorization() });
  /** An authorization.succeeded for the reference, as the attempt's own would be but for `data`. */
  const succeeded = (data: Partial<Record<string, string>> = {}) => {
    const id = randomUUID();
    const orderId = randomUUID();
    const webhook = authorizationSucceeded(reference, {
      authorizationId: id,
      orderId,
      customerToken,
      captureMode,
      ...data,
    });
    return { id, orderId, webhook };
  };
  return { ...kit, seen, reference, customerToken, pendingAuthorization, succeeded };
}

describe("an authorization.succeeded that cannot be the current attempt's is not adopted by reference", () => {
  it("another customer token and capture mode, delivered while attempt 2 holds no id", async () => {
    const { charges, alerts, reference, pendingAuthorization, succeeded } = await pendingAttempt("Manual");
    // Attempt 1 declined at once (422: no authorization); attempt 2 is stored, then sent.
    await charges.apply(reference, { kind: "failed", reason: "PAYMENT_DENIED", attempt: 1 });
    await charges.startNextAttempt(reference, {
      amount: "49.80",
      currency: "EUR",
      captureMode: "Manual",
      pendingAuthorization,
    });

    // The service reports an authorization for this reference: another token, another mode.
    const foreign = succeeded({ customerToken: randomUUID(), captureMode: "Auto", amount: "12.00" });
    await charges.receiveWebhook(foreign.webhook);
    // Attempt 2's own answer.
    const ownId = randomUUID();
    const after = await charges.apply(reference, { kind: "accepted", authorizationId: ownId, attempt: 2 });

    expect(after).toMatchObject({ attempt: 2, status: "pending", authorizationId: ownId.toLowerCase() });
    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", foreign.id],
    ]);
  });

  it.each([
    ["another customer token", { customerToken: randomUUID() }],
    ["another currency", { currency: "SEK" }],
    ["another capture mode", { captureMode: "Manual" }],
  ])("%s alone makes it another order's", async (_name, difference) => {
    const { store, charges, alerts, reference, succeeded } = await pendingAttempt();
    const foreign = succeeded(difference);

    await charges.receiveWebhook(foreign.webhook);

    const after = await store.findByReference(reference);
    expect(after).toMatchObject({ status: "pending", previousAuthorizationIds: [foreign.id] });
    expect(after?.authorizationId).toBeUndefined();
    expect(alerts.map((alert) => alert.authorizationId)).toEqual([foreign.id]);
  });

  it("the attempt's own, in the token's other letter case and with an amount the service totalled, is adopted", async () => {
    const { store, charges, alerts, reference, customerToken, succeeded } = await pendingAttempt();
    // The amount is never compared: the service totals the items itself.
    const own = succeeded({ customerToken: customerToken.toUpperCase(), amount: "49.8" });

    await charges.receiveWebhook(own.webhook);

    // Auto capture (the attempt's and the event's): captured as soon as it succeeded (rule 4).
    expect(await store.findByReference(reference)).toMatchObject({
      status: "captured",
      authorizationId: own.id,
    });
    expect(alerts).toEqual([]);
  });
});

describe("another order's authorization is an event like any other", () => {
  it("its order.captured delivered first and folded into its authorization.succeeded: one alert", async () => {
    const { store, charges, alerts, reference, succeeded } = await pendingAttempt();
    const foreign = succeeded({ customerToken: randomUUID(), amount: "12.00" });
    const captured = signedEvent("order.captured", {
      orderId: foreign.orderId,
      authorizationId: foreign.id,
      amount: "12.00",
      currency: "EUR",
      status: "Activated",
    });

    expect(await charges.receiveWebhook(captured)).toBe("parked");
    await charges.receiveWebhook(foreign.webhook);

    expect(await store.findByReference(reference)).toMatchObject({
      status: "pending",
      previousAuthorizationIds: [foreign.id],
    });
    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", foreign.id],
    ]);
  });

  it("onEvent runs for one the charge does not hold before it counts as applied", async () => {
    const { charges, seen, reference, succeeded } = await pendingAttempt("Manual");
    await charges.apply(reference, { kind: "accepted", authorizationId: randomUUID(), attempt: 1 });
    const foreign = succeeded({ customerToken: randomUUID() });

    await charges.receiveWebhook(foreign.webhook);

    // Acknowledged as applied: its redelivery is a duplicate, so onEvent gets no second chance.
    expect(await charges.receiveWebhook(foreign.webhook)).toBe("duplicate");
    expect(seen.map((received) => received.id)).toEqual([foreign.webhook.id]);
  });
});

describe("over HTTP, against the sandbox's records", () => {
  const shops = useShops();

  it("another customer's authorization for the reference, delivered while the charge's answer is lost, is alerted and never adopted", async () => {
    const sandbox = shops.sandbox();
    const alerts: PaymentAlert[] = [];
    const { data, app } = await shops.shop({
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      clientOptions: { maxRetries: 1 },
      onAlert: (alert) => void alerts.push(alert),
    });
    const customer = data.customer();
    const cartId = data.cart(customer, [{ sku: "grinder", quantity: 1 }]);
    const reference = data.referenceOf(cartId);
    // The charge's answer is lost after the service took the money: pending, no authorization id.
    sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    const lost = await charge(app, customer, { cartId });
    sandbox.clearFaults();
    expect(lost.json.type).toBe("urn:purchase-auth:problem:payment-confirming");
    const [own] = sandbox.authorizations({ merchantId: data.merchant.merchantId });

    // Someone charges another customer's token under the same reference, outside the shop; its
    // webhooks reach the shop while the charge still holds no id.
    sandbox.setWebhooks({
      merchantId: data.merchant.merchantId,
      urls: [`${app.url}/payments/webhooks`],
      secrets: [WEBHOOK_SECRET],
    });
    const other = data.customer();
    const outside = new PurchaseAuthClient({
      baseUrl: sandbox.url,
      clientId: data.merchant.clientId,
      clientSecret: data.merchant.clientSecret,
      scope: data.merchant.scope,
    });
    const foreign = await outside.authorizations.create({
      customerToken: other.customerToken,
      order: {
        items: [{ id: "grinder", ...PRICES.grinder!, quantity: 1 }],
        currency: "EUR",
        reference,
        captureMode: "Auto",
      },
      attemptSchedule: { preferSynchronous: true },
    });
    await outside.close();
    await sandbox.settle();

    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", foreign.authorizationId],
    ]);
    expect(await app.router.store.findByReference(reference)).toMatchObject({
      status: "pending",
      previousAuthorizationIds: [foreign.authorizationId.toLowerCase()],
    });
    expect((await app.router.store.findByReference(reference))?.authorizationId).toBeUndefined();

    // The reconciler resends the charge's own key: it learns its own authorization, no other.
    expect(await app.router.reconcile()).toMatchObject({ resolved: 1 });
    expect(await app.router.store.findByReference(reference)).toMatchObject({
      status: "captured",
      authorizationId: own!.authorizationId.toLowerCase(),
    });
    const succeeded = sandbox
      .authorizations({ merchantId: data.merchant.merchantId })
      .filter(
        (authorization) => authorization.reference === reference && authorization.status === "Succeeded",
      )
      .map((authorization) => authorization.authorizationId)
      .sort();
    expect(succeeded).toEqual([own!.authorizationId, foreign.authorizationId].sort());
  });
});
