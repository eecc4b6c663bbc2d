/**
 * A virtual time as kept in a long-lived record: milliseconds since this module was loaded rather
 * than since 1970. Epoch milliseconds (~1.8e12) are not small integers, so V8 keeps each one in a
 * field as a boxed heap number, an object of its own per record; an offset from the load time stays a
 * small integer for ~24 days of virtual time and then simply becomes a double (still exact).
 */
export type StoredTime = number & { readonly __storedTime: unique symbol };

/** Virtual time never runs before real time (the clock's offset only grows), so offsets start ≥ 0. */
const BASE = Date.now();

// Exact both ways for every virtual time: BASE is an integer below 2^53, so `time - BASE` is a
// multiple of the spacing of doubles at `time` and no larger than `time`, hence representable.

export function toStoredTime(epochMs: number): StoredTime {
  const offset = epochMs - BASE;
  // `| 0` makes an integer offset a small integer even when it was computed as a double (optimised
  // code does): a double would give the record's field a double representation, a box per record.
  return ((offset | 0) === offset ? offset | 0 : offset) as StoredTime;
}

export function toEpochMs(stored: StoredTime): number {
  return stored + BASE;
}
