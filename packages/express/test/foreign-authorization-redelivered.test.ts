import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { type ChargeRecord, MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";

// An authorization the charge does not hold is remembered on the charge itself, not by the event
// store's "applied" mark (stores forget applied events first, and a crash can fall between the
// alert and the mark): delivered again after the shopper paid again, it never becomes the new
// attempt's authorization. (Found by review.)

function event(type: string, data: object) {
  const signed = signWebhook({ type, data } as never, "secret");
  return verifyWebhook(signed.body, signed.headers, "secret");
}

const ORDER = { amount: "49.80", currency: "EUR", captureMode: "Manual" } as const;

function setUp(store: MemoryChargeStore) {
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
  return { charges, alerts };
}

function newCharge(): ChargeRecord {
  const now = new Date().toISOString();
  return {
    reference: `order-${randomUUID().slice(0, 8)}`,
    customerId: "customer-1",
    attempt: 1,
    status: "pending",
    ...ORDER,
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

function foreignSucceeded(reference: string, authorizationId: string) {
  return event("authorization.succeeded", {
    authorizationId,
    orderId: randomUUID(),
    customerToken: randomUUID(),
    reference,
    captureMode: "Manual",
    amount: "49.80",
    currency: "EUR",
  });
}

/** Attempt 1 accepted as Y, then failed. */
async function failedAttemptOne(charges: Charges, reference: string) {
  const knownId = randomUUID();
  await charges.apply(reference, { kind: "accepted", authorizationId: knownId, attempt: 1 });
  await charges.apply(reference, {
    kind: "failed",
    authorizationId: knownId,
    reason: "PAYMENT_METHOD_NO_FUNDS",
    attempt: 1,
  });
}

describe("a foreign authorization is never adopted by the next attempt", () => {
  it("crash (or a store error) between its alert and its mark; the shopper pays again before the redelivery", async () => {
    // markEventApplied fails once for the foreign event: a crash after the alert, a lost DB
    // connection. The webhook answers 500; the service redelivers later, with growing delays.
    class FailingOnceStore extends MemoryChargeStore {
      failFor: string | undefined;
      override async markEventApplied(id: string) {
        if (id === this.failFor) {
          this.failFor = undefined;
          throw new Error("connection lost");
        }
        return super.markEventApplied(id);
      }
    }
    const store = new FailingOnceStore();
    const { charges, alerts } = setUp(store);
    const charge = newCharge();
    await store.create(charge);
    await failedAttemptOne(charges, charge.reference);
    const foreignId = randomUUID();
    const foreign = foreignSucceeded(charge.reference, foreignId);
    store.failFor = foreign.id;
    await expect(charges.receiveWebhook(foreign)).rejects.toThrow("connection lost");
    expect(alerts).toHaveLength(1);

    // The shopper pays again: attempt 2, pending, no id while its create call is in flight.
    await charges.startNextAttempt(charge.reference, ORDER);
    // The service redelivers X.
    await charges.receiveWebhook(foreign);
    // Attempt 2's own answer arrives.
    const ownId = randomUUID();
    const after = await charges.apply(charge.reference, {
      kind: "accepted",
      authorizationId: ownId,
      attempt: 2,
    });

    expect(after).toMatchObject({ attempt: 2, status: "pending", authorizationId: ownId.toLowerCase() });
  });

  it("MemoryChargeStore forgets the applied (foreign) event; its redelivery becomes attempt 2's authorization", async () => {
    const store = new MemoryChargeStore({ maxEvents: 1 });
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
    const charge: ChargeRecord = {
      reference: `order-${randomUUID().slice(0, 8)}`,
      customerId: "customer-1",
      attempt: 1,
      status: "pending",
      ...ORDER,
      operations: { capture: 0, cancel: 0, refund: 0 },
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await store.create(charge);
    // Attempt 1: accepted as Y, then failed.
    const knownId = randomUUID();
    await charges.apply(charge.reference, { kind: "accepted", authorizationId: knownId, attempt: 1 });
    await charges.apply(charge.reference, {
      kind: "failed",
      authorizationId: knownId,
      reason: "PAYMENT_METHOD_NO_FUNDS",
      attempt: 1,
    });
    // X: an authorization.succeeded for the reference that the charge does not know.
    const foreignId = randomUUID();
    const foreign = event("authorization.succeeded", {
      authorizationId: foreignId,
      orderId: randomUUID(),
      customerToken: randomUUID(),
      reference: charge.reference,
      captureMode: "Manual",
      amount: "49.80",
      currency: "EUR",
    });
    await charges.receiveWebhook(foreign);
    // Any later event: the store keeps maxEvents, and forgets applied events first.
    const other = event("customer-token.status-changed", {
      customerToken: randomUUID(),
      status: "Active",
      previousStatus: "Pending",
    });
    await charges.receiveWebhook(other);

    // The shopper pays again: attempt 2, pending, no id while its create call is in flight.
    await charges.startNextAttempt(charge.reference, ORDER);
    // X is delivered again (our first 200 was lost).
    await charges.receiveWebhook(foreign);
    // Attempt 2's own answer arrives.
    const ownId = randomUUID();
    const after = await charges.apply(charge.reference, {
      kind: "accepted",
      authorizationId: ownId,
      attempt: 2,
    });

    expect(after).toMatchObject({ attempt: 2, status: "pending", authorizationId: ownId.toLowerCase() });
  });
});
