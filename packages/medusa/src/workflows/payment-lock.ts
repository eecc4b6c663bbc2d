import { AsyncLocalStorage } from "node:async_hooks";
import type { MedusaContainer } from "@medusajs/framework/types";
import { knexOf } from "./lookups";

// Following the service (followServiceOrder) and repairing a canceled order's payment
// (releaseCanceledOrderPayment) read Medusa's records of a payment, then write from them: a capture
// Medusa missed is recorded by capturing the difference, a refund is sent for what the records show
// unrefunded. Two of them on one payment at once (the order-canceled subscriber and the reconcile
// job, two job runs, a webhook's order.captured during the job, in one process or in several) would
// both see the same difference and act on it twice. Each holds a PostgreSQL advisory lock keyed by
// the payment for the length of its read-then-write, in a transaction of its own: the lock is the
// database's, so it holds across Medusa instances, and it goes with the transaction should the
// process die. Callers re-read Medusa's records after taking it.

const held = new AsyncLocalStorage<ReadonlySet<string>>();

/**
 * Runs `work` holding the lock of payment `paymentId` (waiting for whoever holds it). Re-entrant:
 * work already holding it (in this async flow) runs at once.
 */
export async function withPaymentLock<T>(
  container: MedusaContainer,
  paymentId: string,
  work: () => Promise<T>,
): Promise<T> {
  const mine = held.getStore();
  if (mine?.has(paymentId)) return work();
  return knexOf(container).transaction(async (trx) => {
    await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [
      `purchase-auth:payment:${paymentId}`,
    ]);
    return held.run(new Set([...(mine ?? []), paymentId]), work);
  });
}
