import { setMaxListeners } from "node:events";

// Each create call is bounded by the router's `timeoutMs`. An AbortSignal costs more to create and
// to listen to (core links every attempt to it) than the rest of the adapter's bookkeeping per
// charge, so calls running at the same time share one: they abort together.

/** At most this many calls share a signal: removing a listener walks the signal's list. */
const MAX_USERS = 64;

export interface DeadlineSlot {
  readonly signal: AbortSignal;
}

interface Slot extends DeadlineSlot {
  readonly controller: AbortController;
  readonly startedAt: number;
  readonly timer: ReturnType<typeof setTimeout>;
  users: number;
}

/**
 * Signals that abort `ms` after the first of the calls sharing them started, with the same
 * TimeoutError as `AbortSignal.timeout(ms)`. A call joins the current signal only while another
 * call holds it and it started less than `ms / 100` (at most 100 ms) ago, so every call is aborted
 * no later than `ms` after it started, and at most 1% earlier; the timer is cleared as soon as the
 * last call holding the signal releases it (no timer outlives the calls).
 */
export class SharedDeadline {
  readonly #ms: number;
  readonly #joinWithinMs: number;
  #current: Slot | undefined;

  constructor(ms: number) {
    this.#ms = ms;
    this.#joinWithinMs = Math.min(100, ms / 100);
  }

  /** A signal for one call; give it back with `release` once the call has settled. */
  acquire(): DeadlineSlot {
    // The event loop's monotonic clock, as the timer's: a wall clock set back must not let a new
    // call join a signal that is about to expire.
    const now = performance.now();
    const current = this.#current;
    if (current !== undefined && current.users < MAX_USERS && now - current.startedAt < this.#joinWithinMs) {
      current.users++;
      return current;
    }
    const controller = new AbortController();
    const slot: Slot = {
      controller,
      signal: controller.signal,
      startedAt: now,
      users: 1,
      timer: setTimeout(() => this.#expire(slot), this.#ms),
    };
    // Up to MAX_USERS calls, each with a listener per attempt: not a leak.
    setMaxListeners(0, slot.signal);
    this.#current = slot;
    return slot;
  }

  release(deadline: DeadlineSlot): void {
    const slot = deadline as Slot;
    slot.users--;
    if (slot.users > 0) return;
    clearTimeout(slot.timer);
    if (this.#current === slot) this.#current = undefined;
  }

  #expire(slot: Slot): void {
    if (this.#current === slot) this.#current = undefined;
    slot.controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  }
}
