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

/** Deletes the oldest entries (Map iteration order is insertion order) until at most `max` remain. */
export function evictOldest<K, V>(map: Map<K, V>, max: number, onEvict?: (value: V) => void): void {
  while (map.size > max) {
    const oldest = map.entries().next();
    if (oldest.done) return;
    map.delete(oldest.value[0]);
    onEvict?.(oldest.value[1]);
  }
}
