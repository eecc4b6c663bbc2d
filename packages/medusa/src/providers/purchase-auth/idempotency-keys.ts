import { idempotencyKeyIn } from "@purchase-auth/core";

// Every write to the service carries a key derived from the Medusa id of the operation: Medusa's
// own retries (and a restart mid-call) send the same key, so the service answers with the first
// outcome instead of charging, capturing or refunding twice.

/** Attempt `attempt` (1, 2, ...) to authorize the payment session `sessionId`. */
export function authorizeKey(namespace: string, sessionId: string, attempt: number): string {
  return idempotencyKeyIn(namespace, "medusa", "authorize", sessionId, attempt);
}

/** The capture Medusa recorded as `captureId`. */
export function captureKey(namespace: string, captureId: string): string {
  return idempotencyKeyIn(namespace, "medusa", "capture", captureId);
}

/** The refund Medusa recorded as `refundId`. */
export function refundKey(namespace: string, refundId: string): string {
  return idempotencyKeyIn(namespace, "medusa", "refund", refundId);
}

/** Cancelling the payment `paymentId`. */
export function cancelKey(namespace: string, paymentId: string): string {
  return idempotencyKeyIn(namespace, "medusa", "cancel", paymentId);
}
