import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import {
  acceptedThenFailed,
  authorizationSucceeded,
  chargesOn,
  pendingCharge,
  signedEvent,
} from "./support/charges-kit.js";

// unexpected_authorization: raised once per authorization per change whose news says it succeeded
// for a failed charge (or an earlier attempt), never lost, and not raised again for news already
// applied.

const ORDER = { amount: "49.80", currency: "EUR", captureMode: "Auto" } as const;

describe("unexpected_authorization", () => {
  it("an order event of an earlier attempt, parked and folded into a later event's change, alerts once, not again at the next fold", async () => {
    const { store, charges, alerts } = chargesOn(new MemoryChargeStore());
    const charge = pendingCharge();
    await store.create(charge);
    // Attempt 1 was accepted as X and failed; attempt 2 failed too, by a 422 (it knows no id).
    const firstId = await acceptedThenFailed(charges, charge.reference);
    const orderId = randomUUID();
    await charges.startNextAttempt(charge.reference, ORDER);
    await charges.apply(charge.reference, { kind: "failed", reason: "PAYMENT_DENIED", attempt: 2 });
    expect(await store.findByReference(charge.reference)).toMatchObject({ attempt: 2, status: "failed" });

    // Late news of X, which the service says succeeded: money may be held that nobody expects.
    const captured = signedEvent("order.captured", {
      orderId,
      authorizationId: firstId,
      amount: "49.80",
      currency: "EUR",
      status: "Activated",
    });
    const succeeded = authorizationSucceeded(charge.reference, { authorizationId: firstId, orderId });
    const lateFailed = signedEvent("authorization.failed", {
      authorizationId: firstId,
      customerToken: randomUUID(),
      reference: charge.reference,
      reason: "PAYMENT_FAILED",
      attempt: 1,
    });
    // No charge knows X any more: order.captured is parked.
    expect(await charges.receiveWebhook(captured)).toBe("parked");
    // authorization.succeeded is matched by reference (an earlier attempt's id) and folds it in:
    // one alert for the authorization (both events say the same money may be held).
    expect(await charges.receiveWebhook(succeeded)).toBe("applied");
    expect(alerts).toHaveLength(1);
    expect(alerts.every((alert) => alert.kind === "unexpected_authorization")).toBe(true);
    expect(alerts.every((alert) => alert.authorizationId === firstId)).toBe(true);

    // X's next event (matched by reference too) finds nothing left to fold in: no alert again.
    expect(await charges.receiveWebhook(lateFailed)).toBe("applied");
    expect(alerts).toHaveLength(1);
    // order.captured was applied: its redelivery is a duplicate.
    expect(await store.unappliedEvents(firstId)).toEqual([]);
    expect(await charges.receiveWebhook(captured)).toBe("duplicate");
    expect(alerts).toHaveLength(1);
    expect(await store.findByReference(charge.reference)).toMatchObject({ attempt: 2, status: "failed" });
  });

  it("authorization.succeeded for a failed charge that folds a parked order event alerts once for the authorization", async () => {
    const { store, charges, alerts } = chargesOn(new MemoryChargeStore());
    const charge = pendingCharge();
    await store.create(charge);
    await charges.apply(charge.reference, { kind: "failed", reason: "PAYMENT_DENIED", attempt: 1 });
    const authorizationId = randomUUID();
    const orderId = randomUUID();
    const captured = signedEvent("order.captured", {
      orderId,
      authorizationId,
      amount: "49.80",
      currency: "EUR",
      status: "Activated",
    });
    const succeeded = authorizationSucceeded(charge.reference, { authorizationId, orderId });
    expect(await charges.receiveWebhook(captured)).toBe("parked");
    expect(await charges.receiveWebhook(succeeded)).toBe("applied");
    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", authorizationId],
    ]);
    // Applied: redeliveries are duplicates, and nothing alerts again.
    expect(await charges.receiveWebhook(captured)).toBe("duplicate");
    expect(await charges.receiveWebhook(succeeded)).toBe("duplicate");
    expect(alerts).toHaveLength(1);
    expect(await store.findByReference(charge.reference)).toMatchObject({
      status: "failed",
      authorizationId,
    });
  });

  it("an authorization.succeeded the reference's charge does not know alerts once and is never adopted by the next attempt", async () => {
    const { store, charges, alerts } = chargesOn(new MemoryChargeStore());
    const charge = pendingCharge();
    await store.create(charge);
    // Attempt 1 was accepted as X and failed.
    await acceptedThenFailed(charges, charge.reference);
    // The service reports Y for the same reference: no charge of ours holds it.
    const foreignId = randomUUID();
    const foreign = authorizationSucceeded(charge.reference, { authorizationId: foreignId });
    expect(await charges.receiveWebhook(foreign)).toBe("applied");
    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", foreignId],
    ]);

    // The shopper pays again: attempt 2, pending, no id yet. Y delivered again (its answer was
    // lost) must not become attempt 2's authorization, nor alert again.
    await charges.startNextAttempt(charge.reference, ORDER);
    expect(await charges.receiveWebhook(foreign)).toBe("duplicate");
    expect(alerts).toHaveLength(1);
    const after = await store.findByReference(charge.reference);
    expect(after).toMatchObject({ attempt: 2, status: "pending" });
    expect(after?.authorizationId).toBeUndefined();
  });
});
