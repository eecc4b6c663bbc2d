/**
 * Keys of writes whose last call in this client ended with an unknown outcome, each with when it was
 * first sent. A later call with the same key (the README's "repeat with `error.idempotencyKey`")
 * starts from what the first may have done: it is never reported "not sent" (that would advise a
 * new key, and charge twice), and the first send's time bounds its idempotency window. Bounded: the
 * oldest are forgotten first. Another process knows none of them: it passes `firstSentAt`.
 */
export class UnansweredKeys {
  readonly #firstSentAt = new Map<string, Date>();
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

  /** The key's outcome is known now (done, or a definite answer about it). */
  forget(key: string): void {
    if (this.#firstSentAt.size > 0) this.#firstSentAt.delete(key);
  }
}
