import { randomUUID } from "node:crypto";
import type { WebhookEvent } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import type { Charges } from "../src/charges/charges.js";
import { MemoryChargeStore } from "../src/index.js";
import {
  acceptedThenFailed,
  authorizationSucceeded,
  chargesOn,
  pendingCharge,
  signedEvent,
} from "./support/charges-kit.js";

// An authorization the charge does not hold is remembered on the charge itself, not by the event
// store's "applied" mark (stores forget applied events first, and a crash can fall between the
// alert and the mark): delivered again after the shopper paid again, it never becomes the new
// attempt's authorization. (Found by review.)

const ORDER = { amount: "49.80", currency: "EUR", captureMode: "Manual" } as const;

function foreignSucceeded(reference: string, authorizationId: string) {
  return authorizationSucceeded(reference, { authorizationId, captureMode: "Manual" });
}

/**
 * The shopper pays again (attempt 2, pending, no id while its create call is in flight), the
 * service delivers `foreign` again, then attempt 2's own answer arrives: the charge afterwards.
 */
async function payAgainWhileRedelivered(charges: Charges, reference: string, foreign: WebhookEvent) {
  await charges.startNextAttempt(reference, ORDER);
  await charges.receiveWebhook(foreign);
  const ownId = randomUUID();
  const after = await charges.apply(reference, { kind: "accepted", authorizationId: ownId, attempt: 2 });
  return { after, ownId };
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
    const { charges, alerts } = chargesOn(store);
    const charge = pendingCharge({ captureMode: "Manual" });
    await store.create(charge);
    await acceptedThenFailed(charges, charge.reference);
    const foreignId = randomUUID();
    const foreign = foreignSucceeded(charge.reference, foreignId);
    store.failFor = foreign.id;
    await expect(charges.receiveWebhook(foreign)).rejects.toThrow("connection lost");
    expect(alerts).toHaveLength(1);

    // The shopper pays again; the service redelivers X; attempt 2's own answer arrives.
    const { after, ownId } = await payAgainWhileRedelivered(charges, charge.reference, foreign);

    expect(after).toMatchObject({ attempt: 2, status: "pending", authorizationId: ownId.toLowerCase() });
  });

  it("MemoryChargeStore forgets the applied (foreign) event; its redelivery becomes attempt 2's authorization", async () => {
    const { store, charges } = chargesOn(new MemoryChargeStore({ maxEvents: 1 }));
    const charge = pendingCharge({ captureMode: "Manual" });
    await store.create(charge);
    await acceptedThenFailed(charges, charge.reference);
    // X: an authorization.succeeded for the reference that the charge does not know.
    const foreignId = randomUUID();
    const foreign = foreignSucceeded(charge.reference, foreignId);
    await charges.receiveWebhook(foreign);
    // Any later event: the store keeps maxEvents, and forgets applied events first.
    const other = signedEvent("customer-token.status-changed", {
      customerToken: randomUUID(),
      status: "Active",
      previousStatus: "Pending",
    });
    await charges.receiveWebhook(other);

    // The shopper pays again; X is delivered again (our first 200 was lost); attempt 2's answer.
    const { after, ownId } = await payAgainWhileRedelivered(charges, charge.reference, foreign);

    expect(after).toMatchObject({ attempt: 2, status: "pending", authorizationId: ownId.toLowerCase() });
  });
});
