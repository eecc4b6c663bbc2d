import type { MedusaContainer } from "@medusajs/framework/types";
import { withAdvisoryLock } from "../providers/purchase-auth/advisory-lock";
import { knexOf } from "./lookups";

// Following the service (followServiceOrder) and repairing a canceled order's payment
// (releaseCanceledOrderPayment) read Medusa's records of a payment, then write from them: a capture
// Medusa missed is recorded by capturing the difference, a refund is sent for what the records show
// unrefunded. Two of them on one payment at once (the order-canceled subscriber and the reconcile
// job, two job runs, a webhook's order.captured during the job, in one process or in several) would
// both see the same difference and act on it twice. Each holds the payment's advisory lock
// (advisory-lock.ts) for the length of its read-then-write; callers re-read Medusa's records after
// taking it.

/**
 * Runs `work` holding the lock of payment `paymentId` (waiting for whoever holds it). Re-entrant:
 * work already holding it (in this async flow) runs at once.
 */
export async function withPaymentLock<T>(
  container: MedusaContainer,
  paymentId: string,
  work: () => Promise<T>,
): Promise<T> {
  return withAdvisoryLock(knexOf(container), `purchase-auth:payment:${paymentId}`, work);
}
