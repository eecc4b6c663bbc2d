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

interface Slot<K, V> {
  readonly key: K;
  /** Undefined once deleted, so a deleted slot waiting in the queue does not keep its value alive. */
  value: V | undefined;
  /** False once deleted; the slot then waits in the queue until it is skipped or compacted away. */
  live: boolean;
}

/**
 * A Map that keeps its keys in insertion order in a queue of its own, so the oldest entry is found in
 * O(1). Bounded stores drop entries from the front on every insertion; on a plain Map that is slow:
 * V8 leaves a deleted entry's slot in place until the table is rebuilt, and `map.keys().next()`
 * walks past every such slot, so at 20,000 entries taking the oldest cost tens of µs.
 *
 * Same semantics as a Map: `set` of a present key keeps its place, a deleted and re-added key is new.
 */
export class FifoMap<K, V> {
  readonly #map = new Map<K, Slot<K, V>>();
  /** Slots in insertion order from `#head` (before it: emptied places); deleted ones are skipped. */
  #queue: Array<Slot<K, V> | undefined> = [];
  #head = 0;
  /** Deleted slots still in `#queue` from `#head` on. */
  #deleted = 0;
  /** Walks in progress: the queue must not be compacted under them. */
  #walking = 0;

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    return this.#map.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  set(key: K, value: V): this {
    const slot = this.#map.get(key);
    if (slot !== undefined) {
      slot.value = value;
      return this;
    }
    const added: Slot<K, V> = { key, value, live: true };
    this.#map.set(key, added);
    this.#queue.push(added);
    this.#compact();
    return this;
  }

  delete(key: K): boolean {
    const slot = this.#map.get(key);
    if (slot === undefined) return false;
    this.#remove(slot);
    return true;
  }

  clear(): void {
    this.#map.clear();
    this.#queue = [];
    this.#head = 0;
    this.#deleted = 0;
  }

  /** Values in insertion order. */
  *values(): IterableIterator<V> {
    for (const slot of this.#map.values()) yield slot.value as V;
  }

  /** The oldest value. */
  oldest(): V | undefined {
    return this.#front()?.value;
  }

  /** Deletes the oldest entries until at most `max` remain, handing each to `onEvict`. */
  evictBeyond(max: number, onEvict?: (value: V) => void): void {
    while (this.#map.size > max) {
      const slot = this.#front();
      if (slot === undefined) return;
      const value = slot.value as V;
      this.#remove(slot); // the slot in hand: no second lookup of its key
      onEvict?.(value);
    }
  }

  /**
   * Visits entries from the oldest while `visit` returns true. `visit` may delete entries (its own
   * included); entries added meanwhile are visited too, as by a Map's iterator.
   */
  walkFromOldest(visit: (value: V, key: K) => boolean): void {
    this.#front(); // deleted slots before the oldest leave the queue first
    this.#walking++;
    try {
      for (let index = this.#head; index < this.#queue.length; index++) {
        const slot = this.#queue[index];
        if (slot?.live && !visit(slot.value as V, slot.key)) return;
      }
    } finally {
      this.#walking--;
    }
  }

  #remove(slot: Slot<K, V>): void {
    this.#map.delete(slot.key);
    slot.live = false;
    slot.value = undefined;
    this.#deleted++;
  }

  /** The oldest live slot; deleted slots before it leave the queue (their places are emptied). */
  #front(): Slot<K, V> | undefined {
    const queue = this.#queue;
    while (this.#head < queue.length && !queue[this.#head]!.live) {
      queue[this.#head++] = undefined;
      this.#deleted--;
    }
    return queue[this.#head];
  }

  /** Keeps the queue within a small multiple of the live entries (amortised O(1) per insertion). */
  #compact(): void {
    if (this.#walking > 0) return;
    const queued = this.#queue.length - this.#head;
    if (this.#deleted > 64 && this.#deleted * 2 > queued) {
      const live: Slot<K, V>[] = [];
      for (let index = this.#head; index < this.#queue.length; index++) {
        const slot = this.#queue[index]!;
        if (slot.live) live.push(slot);
      }
      this.#queue = live;
      this.#head = 0;
      this.#deleted = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
