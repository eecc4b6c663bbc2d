import type { VirtualClock } from "./clock.js";

/** A job waiting for its virtual due time. Jobs are synchronous: they change state and return. */
interface Job {
  readonly dueAt: number;
  /** Tie-breaker: jobs due at the same time run in the order they were scheduled. */
  readonly seq: number;
  readonly label: string;
  readonly run: () => void;
}

/** setTimeout cannot wait longer than this; a longer wait is re-armed when it fires. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * Runs jobs at virtual times, in due order. A job due now runs on its own shortly after (an unref'd
 * timer), so an "as soon as possible" attempt needs no clock move; `advance` moves the clock and runs
 * everything that became due, stepping the clock to each job's due time so a job that schedules a
 * follow-up ("one minute after this attempt") sees the time it was due at.
 */
export class Scheduler {
  readonly #clock: VirtualClock;
  readonly #onError: (error: unknown, label: string) => void;
  /** Binary min-heap ordered by (dueAt, seq). */
  #heap: Job[] = [];
  #seq = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerDueAt = Number.POSITIVE_INFINITY;
  #running = false;
  #stopped = false;

  constructor(clock: VirtualClock, onError: (error: unknown, label: string) => void) {
    this.#clock = clock;
    this.#onError = onError;
  }

  /** Number of jobs waiting. */
  get size(): number {
    return this.#heap.length;
  }

  schedule(dueAt: number, label: string, run: () => void): void {
    this.#push({ dueAt, seq: this.#seq++, label, run });
    if (dueAt < this.#timerDueAt) this.#arm();
  }

  /** True when a job is due now. */
  hasDue(): boolean {
    const next = this.#heap[0];
    return next !== undefined && next.dueAt <= this.#clock.now();
  }

  /** Runs every job due now, including jobs that those jobs schedule for now. */
  runDue(): void {
    this.#runUntil(this.#clock.now(), false);
    this.#arm();
  }

  /** Moves the clock forward by `ms`, running each job that falls due on the way, in due order. */
  advance(ms: number): number {
    const target = this.#clock.now() + ms;
    if (!Number.isFinite(target) || ms < 0) throw new RangeError(`cannot advance the clock by ${ms} ms`);
    this.#runUntil(target, true);
    this.#clock.advanceTo(target);
    this.#arm();
    return this.#clock.now();
  }

  /** Drops every job (reset). */
  clear(): void {
    this.#heap = [];
    this.#disarm();
  }

  /** Drops every job and never arms a timer again (close). */
  stop(): void {
    this.#stopped = true;
    this.clear();
  }

  #runUntil(limit: number, stepClock: boolean): void {
    if (this.#running) return; // a job must not re-enter; its follow-ups run in this same loop
    this.#running = true;
    try {
      for (let next = this.#heap[0]; next !== undefined && next.dueAt <= limit; next = this.#heap[0]) {
        this.#pop();
        if (stepClock) this.#clock.advanceTo(next.dueAt);
        try {
          next.run();
        } catch (error) {
          this.#onError(error, next.label);
        }
      }
    } finally {
      this.#running = false;
    }
  }

  #arm(): void {
    this.#disarm();
    const next = this.#heap[0];
    if (next === undefined || this.#stopped) return;
    const delay = Math.min(Math.max(0, next.dueAt - this.#clock.now()), MAX_TIMER_DELAY_MS);
    this.#timerDueAt = next.dueAt;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerDueAt = Number.POSITIVE_INFINITY;
      this.runDue();
    }, delay);
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = Number.POSITIVE_INFINITY;
  }

  #push(job: Job): void {
    const heap = this.#heap;
    heap.push(job);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!earlier(job, heap[parent]!)) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = job;
  }

  #pop(): Job | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && earlier(heap[right]!, heap[left]!) ? right : left;
      if (!earlier(heap[child]!, last)) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
    return top;
  }
}

function earlier(a: Job, b: Job): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
}
