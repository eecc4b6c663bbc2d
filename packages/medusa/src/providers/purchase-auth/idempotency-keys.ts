import { idempotencyKeyIn } from "@purchase-auth/core";

// Every write to the service carries a key derived from facts that stay the same when Medusa (or a
// restart mid-call) repeats the operation, so the service answers with the first outcome instead of
// charging, capturing or refunding twice. Captures and refunds are not keyed by Medusa's capture and
// refund ids: Medusa deletes those when the provider throws, and its retry gets new ones.

/** Attempt `attempt` (1, 2, ...) to authorize the payment session `sessionId`. */
export function authorizeKey(namespace: string, sessionId: string, attempt: number): string {
  return idempotencyKeyIn(namespace, "medusa", "authorize", sessionId, attempt);
}

/**
 * Capturing order `orderId` up to a captured total of `capturedTotal` ("30.00"). Not derived from
 * Medusa's capture id: Medusa deletes its capture when the provider throws (e.g. an unknown
 * outcome), and its retry gets a new id, while the total it aims at stays the same.
 */
export function captureToKey(namespace: string, orderId: string, capturedTotal: string): string {
  return idempotencyKeyIn(namespace, "medusa", "capture-to", orderId, capturedTotal);
}

/** Refunding order `orderId` up to a refunded total of `refundedTotal` (see captureToKey). */
export function refundToKey(namespace: string, orderId: string, refundedTotal: string): string {
  return idempotencyKeyIn(namespace, "medusa", "refund-to", orderId, refundedTotal);
}

/** Giving back the order of deleted payment session `sessionId` (cancel, then refund). */
export function releaseKey(namespace: string, step: "cancel" | "refund", sessionId: string): string {
  return idempotencyKeyIn(namespace, "medusa", "release", step, sessionId);
}

/** Cancelling the payment `paymentId`. */
export function cancelKey(namespace: string, paymentId: string): string {
  return idempotencyKeyIn(namespace, "medusa", "cancel", paymentId);
}
