/**
 * What this client knows of the idempotency keys of its writes beyond one call: which keys' last
 * call ended with an unknown outcome, with when each was first sent, and how many calls with each
 * key are running now. A call with such a key starts from what the other may have done, and one
 * that sent nothing says "unknown" rather than "not sent" (which would invite a new key, and a second
 * charge) while another call with its key is running or ended unknown. Bounded: the oldest unknown
 * keys are forgotten first. Another process knows none of this: it passes `firstSentAt`.
 */
export class KeyMemory {
  readonly #firstSentAt = new Map<string, Date>();
  readonly #running = new Map<string, number>();
  readonly #max: number;

  constructor(max = 10_000) {
    this.#max = max;
  }

  /** When `key` was first sent, if its last call here ended unknown. */
  firstSentAt(key: string): Date | undefined {
    return this.#firstSentAt.size === 0 ? undefined : this.#firstSentAt.get(key);
  }

  remember(key: string, firstSentAt: Date): void {
    this.#firstSentAt.delete(key);
    this.#firstSentAt.set(key, firstSentAt);
    if (this.#firstSentAt.size > this.#max) {
      this.#firstSentAt.delete(this.#firstSentAt.keys().next().value as string);
    }
  }

  /** The key's outcome is known now (done, or the service's definite answer about it). */
  forget(key: string): void {
    if (this.#firstSentAt.size > 0) this.#firstSentAt.delete(key);
  }

  /** A call with `key` starts; `finish` must follow, however it ends. */
  start(key: string): void {
    this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
  }

  finish(key: string): void {
    const running = (this.#running.get(key) ?? 1) - 1;
    if (running > 0) this.#running.set(key, running);
    else this.#running.delete(key);
  }

  /** True while a call with `key` other than the one asking is running. */
  runningElsewhere(key: string): boolean {
    return (this.#running.get(key) ?? 0) > 1;
  }
}
