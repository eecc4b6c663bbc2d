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

/** Marks a place in the queue whose entry was deleted (or that was never used). */
const DELETED: unique symbol = Symbol("deleted");
/** Places of a new ring; it doubles when full. */
const INITIAL_CAPACITY = 16;
/** Sequence numbers stay small integers: past this one the queue is renumbered from 0. */
const MAX_SEQUENCE = 2 ** 30;

/**
 * A Map that keeps its keys in insertion order in a queue of its own, so the oldest entry is found in
 * O(1). Bounded stores drop entries from the front on every insertion; on a plain Map that is slow:
 * V8 leaves a deleted entry's slot in place until the table is rebuilt, and `map.keys().next()`
 * walks past every such slot, so at 20,000 entries taking the oldest cost tens of µs.
 *
 * The queue is a ring of two arrays (keys and values) and the map holds each key's sequence number,
 * a small integer; sequence number s has the place s modulo the ring's capacity (a power of two). No
 * object per entry, so a store of 20,000 records keeps no 20,000 slots for the garbage collector to
 * copy and mark. The ring doubles when full and is otherwise reused: a bounded store that drops its
 * oldest entry on every insertion allocates nothing once full. (Arrays cut and regrown instead were
 * allocated afresh every few thousand insertions, large objects on pages new to the process: their
 * page faults and copies made an insertion at 20,000 entries cost three times a Map's.)
 *
 * Same semantics as a Map: `set` of a present key keeps its place, a deleted and re-added key is new.
 */
export class FifoMap<K, V> {
  /** Each key's sequence number. */
  readonly #positions = new Map<K, number>();
  /** Keys by place; DELETED where an entry was deleted and outside the queue. */
  #keys: Array<K | typeof DELETED> = new Array(INITIAL_CAPACITY).fill(DELETED);
  /** The values, at the same places (undefined where deleted: a deleted value is not kept alive). */
  #values: Array<V | undefined> = new Array(INITIAL_CAPACITY).fill(undefined);
  /** The ring's capacity minus one: a sequence number's place is `sequence & #mask`. */
  #mask = INITIAL_CAPACITY - 1;
  /** Sequence number of the queue's front (the oldest entry, or deleted places before it). */
  #head = 0;
  /** Sequence number the next entry gets. */
  #tail = 0;
  /** Deleted places still in the queue. */
  #deleted = 0;
  /** Walks in progress: the queue must not be renumbered under them. */
  #walking = 0;

  get size(): number {
    return this.#positions.size;
  }

  get(key: K): V | undefined {
    const position = this.#positions.get(key);
    return position === undefined ? undefined : this.#values[position & this.#mask];
  }

  has(key: K): boolean {
    return this.#positions.has(key);
  }

  set(key: K, value: V): this {
    const last = this.#tail - 1;
    if (last >= this.#head && this.#keys[last & this.#mask] === key) {
      // The newest key (a key taken, then its outcome stored): its place is known without a lookup.
      this.#values[last & this.#mask] = value;
      return this;
    }
    const position = this.#positions.get(key);
    if (position !== undefined) {
      this.#values[position & this.#mask] = value;
      return this;
    }
    this.#positions.set(key, this.#tail);
    this.#append(key, value);
    return this;
  }

  /**
   * `set` for a key the caller knows to be new (a fresh GUID, a key just looked up): one map write
   * instead of a lookup and a write. A key that is present after all keeps its place, as with `set`.
   */
  add(key: K, value: V): this {
    const positions = this.#positions;
    const size = positions.size;
    positions.set(key, this.#tail);
    if (positions.size === size) {
      // The write above moved a present key's position: put it back (found by a scan, never expected).
      let position = this.#head;
      while (this.#keys[position & this.#mask] !== key) position++;
      positions.set(key, position);
      this.#values[position & this.#mask] = value;
      return this;
    }
    this.#append(key, value);
    return this;
  }

  delete(key: K): boolean {
    const position = this.#positions.get(key);
    if (position === undefined) return false;
    this.#remove(key, position);
    return true;
  }

  clear(): void {
    this.#positions.clear();
    this.#keys = new Array(INITIAL_CAPACITY).fill(DELETED);
    this.#values = new Array(INITIAL_CAPACITY).fill(undefined);
    this.#mask = INITIAL_CAPACITY - 1;
    // Sequence numbers go on from where they were: a walk in progress (a visit that clears) then
    // finds itself before the new front and goes on with what is added next, as a Map iterator does.
    this.#head = this.#tail;
    this.#deleted = 0;
  }

  /** Values in insertion order. */
  *values(): IterableIterator<V> {
    for (const position of this.#positions.values()) yield this.#values[position & this.#mask] as V;
  }

  /** The oldest value. */
  oldest(): V | undefined {
    return this.#front() ? this.#values[this.#head & this.#mask] : undefined;
  }

  /** Deletes the oldest entries until at most `max` remain, handing each to `onEvict`. */
  evictBeyond(max: number, onEvict?: (value: V) => void): void {
    while (this.#positions.size > max && this.#front()) {
      const place = this.#head & this.#mask;
      const value = this.#values[place] as V;
      this.#remove(this.#keys[place] as K, this.#head);
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
      for (let position = this.#head; position < this.#tail; position++) {
        // `visit` may have dropped the front of the queue (evictions) past this place.
        if (position < this.#head) position = this.#head;
        const place = position & this.#mask;
        const key = this.#keys[place]!;
        if (key !== DELETED && !visit(this.#values[place] as V, key)) return;
      }
    } finally {
      this.#walking--;
    }
  }

  #append(key: K, value: V): void {
    if (this.#tail - this.#head === this.#keys.length) this.#grow();
    const place = this.#tail & this.#mask;
    this.#keys[place] = key;
    this.#values[place] = value;
    this.#tail++;
    this.#compact();
  }

  #remove(key: K, position: number): void {
    this.#positions.delete(key);
    const place = position & this.#mask;
    this.#keys[place] = DELETED;
    this.#values[place] = undefined;
    this.#deleted++;
  }

  /** Skips deleted places at the front of the queue; false when no entry is left. */
  #front(): boolean {
    const keys = this.#keys;
    while (this.#head < this.#tail) {
      if (keys[this.#head & this.#mask] !== DELETED) return true;
      this.#head++;
      this.#deleted--;
    }
    return false;
  }

  /** Doubles the ring; every sequence number keeps its entry (only places change). */
  #grow(): void {
    const capacity = this.#keys.length * 2;
    const keys: Array<K | typeof DELETED> = new Array(capacity).fill(DELETED);
    const values: Array<V | undefined> = new Array(capacity).fill(undefined);
    for (let position = this.#head; position < this.#tail; position++) {
      keys[position & (capacity - 1)] = this.#keys[position & this.#mask]!;
      values[position & (capacity - 1)] = this.#values[position & this.#mask];
    }
    this.#keys = keys;
    this.#values = values;
    this.#mask = capacity - 1;
  }

  /**
   * Renumbers the live entries from 0 when the queue is mostly deleted places (deletes in the middle)
   * or sequence numbers are about to leave the small integers. Amortised O(1) per insertion.
   */
  #compact(): void {
    if (this.#walking > 0) return;
    const queued = this.#tail - this.#head;
    if ((this.#deleted > 64 && this.#deleted * 2 > queued) || this.#tail > MAX_SEQUENCE) {
      const capacity = this.#keys.length;
      const keys: Array<K | typeof DELETED> = new Array(capacity).fill(DELETED);
      const values: Array<V | undefined> = new Array(capacity).fill(undefined);
      let next = 0;
      for (let position = this.#head; position < this.#tail; position++) {
        const key = this.#keys[position & this.#mask]!;
        if (key === DELETED) continue;
        this.#positions.set(key, next); // a present key keeps its place in the map
        keys[next] = key;
        values[next] = this.#values[position & this.#mask];
        next++;
      }
      this.#keys = keys;
      this.#values = values;
      this.#head = 0;
      this.#tail = next;
      this.#deleted = 0;
    }
  }
}
