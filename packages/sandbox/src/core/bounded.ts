/**
 * Keeps the last `capacity` items pushed. Recorded history (attempts, deliveries, token requests)
 * lives in these so a long benchmark run cannot grow memory without bound.
 */
export class RingBuffer<T> {
  readonly #capacity: number;
  #items: T[] = [];
  /** Index of the oldest item once the buffer is full. */
  #start = 0;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, Math.floor(capacity));
  }

  get length(): number {
    return this.#items.length;
  }

  push(item: T): void {
    if (this.#items.length < this.#capacity) {
      this.#items.push(item);
      return;
    }
    this.#items[this.#start] = item;
    this.#start = (this.#start + 1) % this.#capacity;
  }

  /** Oldest first. */
  toArray(): T[] {
    return [...this.#items.slice(this.#start), ...this.#items.slice(0, this.#start)];
  }

  clear(): void {
    this.#items = [];
    this.#start = 0;
  }
}

/** Marks a deleted entry's place in the queue until it is skipped or compacted away. */
const DELETED: unique symbol = Symbol("deleted");

/**
 * A Map that keeps its keys in insertion order in a queue of its own, so the oldest entry is found in
 * O(1). Bounded stores drop entries from the front on every insertion; on a plain Map that is slow:
 * V8 leaves a deleted entry's slot in place until the table is rebuilt, and `map.keys().next()`
 * walks past every such slot, so at 20,000 entries taking the oldest cost tens of µs.
 *
 * The queue is two arrays (keys and values) and the map holds each key's position in them, a small
 * integer: no object per entry, so a store of 20,000 records keeps no 20,000 slots for the garbage
 * collector to copy and mark.
 *
 * Same semantics as a Map: `set` of a present key keeps its place, a deleted and re-added key is new.
 */
export class FifoMap<K, V> {
  /** Each key's position: its index in the queue plus `#base`. */
  readonly #positions = new Map<K, number>();
  /** Keys in insertion order from `#head` (before it: skipped places); DELETED where one was deleted. */
  #keys: Array<K | typeof DELETED> = [];
  /** The values, at the same indices (undefined where deleted: a deleted value is not kept alive). */
  #values: Array<V | undefined> = [];
  /** Position of index 0: dropping the front of the queue renumbers nothing. */
  #base = 0;
  #head = 0;
  /** Deleted places still in the queue from `#head` on. */
  #deleted = 0;
  /** Walks in progress: the queue must not be compacted under them. */
  #walking = 0;

  get size(): number {
    return this.#positions.size;
  }

  get(key: K): V | undefined {
    const position = this.#positions.get(key);
    return position === undefined ? undefined : this.#values[position - this.#base];
  }

  has(key: K): boolean {
    return this.#positions.has(key);
  }

  set(key: K, value: V): this {
    const last = this.#keys.length - 1;
    if (last >= this.#head && this.#keys[last] === key) {
      // The newest key (a key taken, then its outcome stored): its place is known without a lookup.
      this.#values[last] = value;
      return this;
    }
    const position = this.#positions.get(key);
    if (position !== undefined) {
      this.#values[position - this.#base] = value;
      return this;
    }
    this.#positions.set(key, this.#base + this.#keys.length);
    this.#keys.push(key);
    this.#values.push(value);
    this.#compact();
    return this;
  }

  /**
   * `set` for a key the caller knows to be new (a fresh GUID, a key just looked up): one map write
   * instead of a lookup and a write. A key that is present after all keeps its place, as with `set`.
   */
  add(key: K, value: V): this {
    const positions = this.#positions;
    const size = positions.size;
    positions.set(key, this.#base + this.#keys.length);
    if (positions.size === size) {
      // The write above moved a present key's position: put it back (found by a scan, never expected).
      const index = this.#keys.indexOf(key, this.#head);
      positions.set(key, this.#base + index);
      this.#values[index] = value;
      return this;
    }
    this.#keys.push(key);
    this.#values.push(value);
    this.#compact();
    return this;
  }

  delete(key: K): boolean {
    const position = this.#positions.get(key);
    if (position === undefined) return false;
    this.#remove(key, position - this.#base);
    return true;
  }

  clear(): void {
    this.#positions.clear();
    this.#keys = [];
    this.#values = [];
    this.#base = 0;
    this.#head = 0;
    this.#deleted = 0;
  }

  /** Values in insertion order. */
  *values(): IterableIterator<V> {
    for (const position of this.#positions.values()) yield this.#values[position - this.#base] as V;
  }

  /** The oldest value. */
  oldest(): V | undefined {
    const index = this.#front();
    return index === undefined ? undefined : this.#values[index];
  }

  /** Deletes the oldest entries until at most `max` remain, handing each to `onEvict`. */
  evictBeyond(max: number, onEvict?: (value: V) => void): void {
    while (this.#positions.size > max) {
      const index = this.#front();
      if (index === undefined) return;
      const value = this.#values[index] as V;
      this.#remove(this.#keys[index] as K, index);
      onEvict?.(value);
    }
  }

  /**
   * Visits entries from the oldest while `visit` returns true. `visit` may delete entries (its own
   * included); entries added meanwhile are visited too, as by a Map's iterator.
   */
  walkFromOldest(visit: (value: V, key: K) => boolean): void {
    this.#front(); // deleted places before the oldest leave the queue first
    this.#walking++;
    try {
      for (let index = this.#head; index < this.#keys.length; index++) {
        const key = this.#keys[index]!;
        if (key !== DELETED && !visit(this.#values[index] as V, key)) return;
      }
    } finally {
      this.#walking--;
    }
  }

  #remove(key: K, index: number): void {
    this.#positions.delete(key);
    this.#keys[index] = DELETED;
    this.#values[index] = undefined;
    this.#deleted++;
  }

  /** The index of the oldest entry; deleted places before it leave the queue. */
  #front(): number | undefined {
    const keys = this.#keys;
    while (this.#head < keys.length && keys[this.#head] === DELETED) {
      this.#head++;
      this.#deleted--;
    }
    return this.#head < keys.length ? this.#head : undefined;
  }

  /** Keeps the queue within a small multiple of the live entries (amortised O(1) per insertion). */
  #compact(): void {
    if (this.#walking > 0) return;
    const queued = this.#keys.length - this.#head;
    if ((this.#deleted > 64 && this.#deleted * 2 > queued) || this.#base > 2 ** 30) {
      // Mostly deleted places (or positions about to leave the small integers): keep the live entries
      // only, and renumber them.
      const keys: K[] = [];
      const values: Array<V | undefined> = [];
      for (let index = this.#head; index < this.#keys.length; index++) {
        const key = this.#keys[index]!;
        if (key === DELETED) continue;
        this.#positions.set(key, keys.length); // a present key keeps its place in the map
        keys.push(key);
        values.push(this.#values[index]);
      }
      this.#keys = keys;
      this.#values = values;
      this.#base = 0;
      this.#head = 0;
      this.#deleted = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#keys.length) {
      // The front was dropped: cut it off, and count the cut in `#base` instead of renumbering.
      this.#keys = this.#keys.slice(this.#head);
      this.#values = this.#values.slice(this.#head);
      this.#base += this.#head;
      this.#head = 0;
    }
  }
}
