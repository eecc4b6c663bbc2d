/** A FIFO queue whose shift is O(1) (Array#shift copies the rest of a long array). */
class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head === this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined; // let it be collected
    // Compact now and then, so a lane that never runs empty does not keep every slot it ever had.
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }
}

export interface LaneItem {
  /** Items with the same key are run one at a time, in the order they were pushed. */
  readonly orderKey: string;
}

/**
 * The work waiting for one receiver URL: at most `limit` items in flight at once, so a slow
 * receiver gets many deliveries in parallel but never an unbounded number. Items with the same
 * order key (the events of one authorization, say) still run one at a time in push order, so the
 * order a receiver sees for one resource is the order they were queued in (`outOfOrder` reverses
 * that order on purpose; parallelism alone never does).
 */
export class DeliveryLane<T extends LaneItem> {
  readonly #limit: number;
  readonly #run: (item: T) => Promise<void>;
  readonly #onIdle: () => void;
  /** Waiting items per order key, oldest first; a key is here only while it has some. */
  #waiting = new Map<string, Fifo<T>>();
  /** Keys with waiting items and nothing in flight, in the order they became ready. */
  #ready = new Fifo<string>();
  /** Keys with an item in flight. */
  readonly #busy = new Set<string>();
  #inFlight = 0;
  #cleared = false;

  /**
   * `run` must not reject: the lane does not report errors, it only counts. `onIdle` is called when
   * the last item in flight ends with nothing waiting (the owner may then forget the lane).
   */
  constructor(limit: number, run: (item: T) => Promise<void>, onIdle: () => void = () => undefined) {
    this.#limit = limit;
    this.#run = run;
    this.#onIdle = onIdle;
  }

  /** Nothing waiting and nothing in flight. */
  get idle(): boolean {
    return this.#inFlight === 0 && this.#waiting.size === 0;
  }

  push(item: T): void {
    if (this.#cleared) return;
    let queue = this.#waiting.get(item.orderKey);
    if (queue === undefined) {
      queue = new Fifo();
      this.#waiting.set(item.orderKey, queue);
      if (!this.#busy.has(item.orderKey)) this.#ready.push(item.orderKey);
    }
    queue.push(item);
    this.#pump();
  }

  /** Drops everything waiting for good (reset); items in flight finish on their own. */
  clear(): void {
    this.#cleared = true;
    this.#waiting = new Map();
    this.#ready = new Fifo();
  }

  #pump(): void {
    while (this.#inFlight < this.#limit) {
      const key = this.#ready.shift();
      if (key === undefined) return;
      const queue = this.#waiting.get(key);
      const item = queue?.shift();
      if (queue === undefined || item === undefined) continue;
      if (queue.size === 0) this.#waiting.delete(key);
      void this.#start(key, item);
    }
  }

  async #start(key: string, item: T): Promise<void> {
    this.#busy.add(key);
    this.#inFlight++;
    try {
      await this.#run(item);
    } finally {
      this.#inFlight--;
      this.#busy.delete(key);
      if (this.#waiting.has(key)) this.#ready.push(key);
      this.#pump();
      if (this.idle) this.#onIdle();
    }
  }
}
