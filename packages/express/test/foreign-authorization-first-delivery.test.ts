import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { type ChargeRecord, MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";

// An authorization.succeeded matched by reference while the charge's attempt holds no id yet is
// adopted only if it can be the attempt's own: another customer token than the attempt's create
// call, another currency or capture mode make it another order's (alerted, remembered as not the
// charge's), so the attempt's own answer still lands. (Found by review; it was adopted before.)

function event(type: string, data: object) {
  const signed = signWebhook({ type, data } as never, "secret");
  return verifyWebhook(signed.body, signed.headers, "secret");
}

describe("an authorization.succeeded that cannot be the current attempt's is not adopted by reference", () => {
  it("another customer token and another amount, delivered while attempt 2 holds no id", async () => {
    const store = new MemoryChargeStore();
    const alerts: PaymentAlert[] = [];
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: {},
      onEvent: undefined,
      alert: async (alert) => {
        alerts.push(alert);
      },
    });
    const now = new Date().toISOString();
    const reference = `order-${randomUUID().slice(0, 8)}`;
    const customerToken = randomUUID();
    const request = {
      customerToken,
      order: {
        items: [{ id: "grinder", description: "Grinder", unitPrice: "49.80", quantity: "1", vat: "24" }],
        currency: "EUR",
        reference,
        captureMode: "Manual",
      },
    };
    const charge: ChargeRecord = {
      reference,
      customerId: "customer-1",
      attempt: 1,
      status: "pending",
      amount: "49.80",
      currency: "EUR",
      captureMode: "Manual",
      pendingAuthorization: { idempotencyKey: randomUUID(), request: request as never, firstSentAt: now },
      operations: { capture: 0, cancel: 0, refund: 0 },
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await store.create(charge);
    // Attempt 1 declined at once (422: no authorization); attempt 2 is stored, then sent.
    await charges.apply(reference, { kind: "failed", reason: "PAYMENT_DENIED", attempt: 1 });
    await charges.startNextAttempt(reference, {
      amount: "49.80",
      currency: "EUR",
      captureMode: "Manual",
      pendingAuthorization: () => ({
        idempotencyKey: randomUUID(),
        request: request as never,
        firstSentAt: now,
      }),
    });

    // The service reports an authorization for this reference: another token, another amount.
    const foreignId = randomUUID();
    await charges.receiveWebhook(
      event("authorization.succeeded", {
        authorizationId: foreignId,
        orderId: randomUUID(),
        customerToken: randomUUID(),
        reference,
        captureMode: "Auto",
        amount: "12.00",
        currency: "EUR",
      }),
    );
    // Attempt 2's own answer.
    const ownId = randomUUID();
    const after = await charges.apply(reference, { kind: "accepted", authorizationId: ownId, attempt: 2 });

    expect(after).toMatchObject({ attempt: 2, status: "pending", authorizationId: ownId.toLowerCase() });
    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", foreignId],
    ]);
  });

  /** A pending attempt 1 (no id yet) whose create call is recorded, and its bookkeeping. */
  async function pendingAttempt() {
    const store = new MemoryChargeStore();
    const alerts: PaymentAlert[] = [];
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: {},
      onEvent: undefined,
      alert: async (alert) => {
        alerts.push(alert);
      },
    });
    const now = new Date().toISOString();
    const reference = `order-${randomUUID().slice(0, 8)}`;
    const customerToken = randomUUID();
    const request = {
      customerToken,
      order: { items: [], currency: "EUR", reference, captureMode: "Auto" },
    };
    await store.create({
      reference,
      customerId: "customer-1",
      attempt: 1,
      status: "pending",
      amount: "49.80",
      currency: "EUR",
      captureMode: "Auto",
      pendingAuthorization: { idempotencyKey: randomUUID(), request: request as never, firstSentAt: now },
      operations: { capture: 0, cancel: 0, refund: 0 },
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    /** An authorization.succeeded for the reference, as the attempt's own would be but for `data`. */
    const succeeded = (data: Partial<Record<string, string>>) => {
      const id = randomUUID();
      const webhook = event("authorization.succeeded", {
        authorizationId: id,
        orderId: randomUUID(),
        customerToken,
        reference,
        captureMode: "Auto",
        amount: "49.80",
        currency: "EUR",
        ...data,
      });
      return { id, webhook };
    };
    return { store, charges, alerts, reference, customerToken, succeeded };
  }

  it.each([
    ["another customer token", { customerToken: randomUUID() }],
    ["another currency", { currency: "SEK" }],
    ["another capture mode", { captureMode: "Manual" }],
  ])("%s alone makes it another order's", async (_name, difference) => {
    const { store, charges, alerts, reference, succeeded } = await pendingAttempt();
    const foreign = succeeded(difference);

    await charges.receiveWebhook(foreign.webhook);

    const after = await store.findByReference(reference);
    expect(after).toMatchObject({
      status: "pending",
      previousAuthorizationIds: [foreign.id],
    });
    expect(after?.authorizationId).toBeUndefined();
    expect(alerts.map((alert) => alert.authorizationId)).toEqual([foreign.id]);
  });

  it("the attempt's own, in the token's other letter case and with an amount the service totalled, is adopted", async () => {
    const { store, charges, alerts, reference, customerToken, succeeded } = await pendingAttempt();
    // The amount is never compared: the service totals the items itself.
    const own = succeeded({ customerToken: customerToken.toUpperCase(), amount: "49.8" });

    await charges.receiveWebhook(own.webhook);

    expect(await store.findByReference(reference)).toMatchObject({
      status: "authorized",
      authorizationId: own.id,
    });
    expect(alerts).toEqual([]);
  });
});
