/**
 * Calls in flight in this process, by key: a second caller for the same key joins the call under
 * way instead of repeating it (a re-press, a reconcile pass), and the key is free again once the
 * call has settled.
 */
export class InFlight<T> {
  readonly #calls = new Map<string, Promise<T>>();

  has(key: string): boolean {
    return this.#calls.has(key);
  }

  /** The call in flight for `key`, or the one `start()` begins, kept until it settles. */
  join(key: string, start: () => Promise<T>): Promise<T> {
    let call = this.#calls.get(key);
    if (!call) {
      call = start();
      this.#calls.set(key, call);
      // Forgotten before any caller resumes (this reaction is registered first). Not `.finally()`:
      // it costs two promises and three closures more per call (~0.4 KiB a charge).
      const forget = () => this.#calls.delete(key);
      call.then(forget, forget);
    }
    return call;
  }
}
