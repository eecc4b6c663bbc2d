import { problem } from "../problems.js";

/**
 * Caps the open live-update streams, per customer and in all: each one holds a socket, two timers
 * and a store poll, so a script opening thousands (or one shopper's forgotten tabs) must not exhaust
 * the app. Beyond a cap the answer is a 429; the page can fall back to reading the status route.
 */
export class StreamQuota {
  readonly #perCustomer: number;
  readonly #total: number;
  readonly #open = new Map<string, number>();
  #openTotal = 0;

  constructor(limits: { maxStreamsPerCustomer: number; maxStreams: number }) {
    this.#perCustomer = limits.maxStreamsPerCustomer;
    this.#total = limits.maxStreams;
  }

  /** Takes a slot for `customerId`'s new stream, or throws a 429 problem; call the result once, at close. */
  acquire(customerId: string): () => void {
    const mine = this.#open.get(customerId) ?? 0;
    if (mine >= this.#perCustomer || this.#openTotal >= this.#total) {
      throw problem(
        "too-many-streams",
        429,
        "Too many live updates",
        "Too many pages are following payments at once. Close one, or reload this page later.",
        { retryable: true },
      );
    }
    this.#open.set(customerId, mine + 1);
    this.#openTotal++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#openTotal--;
      const left = (this.#open.get(customerId) ?? 1) - 1;
      if (left === 0) this.#open.delete(customerId);
      else this.#open.set(customerId, left);
    };
  }
}
