import { DEFAULT_IDEMPOTENCY_NAMESPACE, idempotencyKeyIn } from "@purchase-auth/core";

/**
 * The idempotency key of one attempt of one item: bound to the batch, the item, the customer token
 * and the attempt number, so a restarted run sends the same key for the same attempt, and a new
 * attempt (after a decline worth retrying) always gets a new one.
 */
export function batchChargeKey(
  batchId: string,
  itemId: string,
  customerToken: string,
  attempt: number,
  namespace: string = DEFAULT_IDEMPOTENCY_NAMESPACE,
): string {
  return idempotencyKeyIn(namespace, "purchase-auth-batch", batchId, itemId, customerToken, attempt);
}
