/**
 * A virtual time as kept in a long-lived record. Epoch milliseconds (~1.8e12) are not small
 * integers, so V8 keeps each one in a record's field as a boxed heap number, an object of its own
 * per record. A whole millisecond is kept instead as its distance from when this module was loaded:
 * a small integer for ~24 days of virtual time either side, later a double. Anything else (a
 * fraction of a millisecond, left by a fractional clock advance) is kept as it is, in a box.
 */
export type StoredTime = number | { readonly epochMs: number };

const BASE = Date.now();

export function toStoredTime(epochMs: number): StoredTime {
  // Both are integers: when the distance is one too (below 2^53), it is exact and so is the way
  // back. A fraction, or a time too far from BASE, would round (a clock set before 1998 did).
  const offset = epochMs - BASE;
  if (!Number.isSafeInteger(epochMs) || !Number.isSafeInteger(offset)) return { epochMs };
  // `| 0` makes the offset a small integer even when optimised code computed it as a double (a
  // double would give the record's field a double representation, a box per record).
  return (offset | 0) === offset ? offset | 0 : offset;
}

export function toEpochMs(stored: StoredTime): number {
  return typeof stored === "number" ? stored + BASE : stored.epochMs;
}
