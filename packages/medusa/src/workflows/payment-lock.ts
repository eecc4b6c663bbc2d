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
 * Lock holders (and waiters) at once in this process. Each keeps a connection of Medusa's shared
 * pool idle in its transaction while its work queries on others from the same pool: as many holders
 * as the pool has connections (10 by default) left none for their work, and everything that needed
 * the database stalled until knex gave up a minute later. The rest wait here, holding nothing.
 */
const MAX_LOCK_HOLDERS = 2;
let holders = 0;
const waiting: Array<() => void> = [];

async function takeSlot(): Promise<void> {
  if (holders < MAX_LOCK_HOLDERS) {
    holders++;
    return;
  }
  // Handed over by the slot's last holder: the count stays as it is.
  await new Promise<void>((resolve) => waiting.push(resolve));
}

function giveSlotBack(): void {
  const next = waiting.shift();
  if (next) next();
  else holders--;
}

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
  // Work already holding another payment's lock has its slot: waiting for a second could wait for ever.
  const slotted = mine === undefined || mine.size === 0;
  if (slotted) await takeSlot();
  try {
    return await knexOf(container).transaction(async (trx) => {
      await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [
        `purchase-auth:payment:${paymentId}`,
      ]);
      return held.run(new Set([...(mine ?? []), paymentId]), work);
    });
  } finally {
    if (slotted) giveSlotBack();
  }
}
