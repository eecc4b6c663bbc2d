import type { ChargeRecord, PendingCursor } from "./types.js";

// The order `listPending` lists pending charges in: least recently written first (`updatedAt`,
// then `reference`), the order the reconciler pages through them.

/** True when `charge` comes after `cursor` in that order. */
export function comesAfter(charge: ChargeRecord, cursor: PendingCursor): boolean {
  if (charge.updatedAt !== cursor.updatedAt) return charge.updatedAt > cursor.updatedAt;
  return charge.reference > cursor.reference;
}

/** Compares two charges in that order (for `Array.prototype.sort`). */
export function byPendingOrder(a: ChargeRecord, b: ChargeRecord): number {
  if (a.updatedAt !== b.updatedAt) return a.updatedAt < b.updatedAt ? -1 : 1;
  return a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0;
}
