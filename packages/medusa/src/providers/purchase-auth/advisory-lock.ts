import { AsyncLocalStorage } from "node:async_hooks";
import type { Knex } from "./session-sql";

// A PostgreSQL advisory lock held for the length of some read-then-write, in a transaction of its
// own: the lock is the database's, so it holds across Medusa instances, and it goes with the
// transaction should the process die. Callers re-read what they act on after taking it. The plugin
// locks a Medusa payment (following the service, repairing a canceled order) and a service order
// (the provider's capture and refund, which Medusa calls outside any lock of its own).

/** The lock of the service's order `orderId`, held by the provider's captures and refunds. */
export function orderLockName(orderId: string): string {
  return `purchase-auth:order:${orderId}`;
}

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
 * Runs `work` holding the advisory lock named `name` (waiting for whoever holds it). Re-entrant:
 * work already holding it (in this async flow) runs at once. Locks are taken in one order only (a
 * payment's, then its service order's), so two flows never wait for each other's.
 */
export async function withAdvisoryLock<T>(knex: Knex, name: string, work: () => Promise<T>): Promise<T> {
  const mine = held.getStore();
  if (mine?.has(name)) return work();
  // Work already holding another lock has its slot: waiting for a second could wait for ever.
  const slotted = mine === undefined || mine.size === 0;
  if (slotted) await takeSlot();
  try {
    return await knex.transaction(async (trx) => {
      await trx.raw("select pg_advisory_xact_lock(hashtextextended(?, 0))", [name]);
      return held.run(new Set([...(mine ?? []), name]), work);
    });
  } finally {
    if (slotted) giveSlotBack();
  }
}
