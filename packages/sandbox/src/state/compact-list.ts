/**
 * A record's short list (its attempts, an order's operations) as kept: nothing, the one entry
 * itself, or an array once there are two. Nearly every record has exactly one entry for as long as
 * it is kept; an array of one is two more objects (~56 bytes) for each of the thousands held.
 * Entries are objects, never arrays, so the three forms cannot be mistaken for one another.
 */
export type CompactList<T extends object> = T | T[] | undefined;

/** The list with `entry` appended; beyond `max` (at least 2, no limit unless given) the oldest is dropped. */
export function appended<T extends object>(
  list: CompactList<T>,
  entry: T,
  max = Number.POSITIVE_INFINITY,
): CompactList<T> {
  if (list === undefined) return entry;
  if (!Array.isArray(list)) return [list, entry];
  list.push(entry);
  if (list.length > max) list.shift();
  return list;
}

/** The entries, oldest first, in a new array (a caller may change it without changing the record). */
export function entriesOf<T extends object>(list: CompactList<T>): T[] {
  if (list === undefined) return [];
  return Array.isArray(list) ? [...list] : [list];
}
