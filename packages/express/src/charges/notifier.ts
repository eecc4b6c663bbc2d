import type { Logger } from "@purchase-auth/core";
import type { ChargeRecord } from "../stores/types.js";

type Listener = (charge: ChargeRecord) => void;

/**
 * Tells live-update streams of this process that a charge changed, so they answer at once.
 * Changes made by other instances reach them by polling the store instead.
 *
 * Listeners by reference in a Map, not an EventEmitter keyed by reference: a charge whose reference
 * was "error" made `emit` throw after its change was stored (no "error" listener), one watching
 * "newListener" was called with event names, and most changes have nobody watching, which a Map
 * tells without turning the reference into a property name.
 */
export class ChargeNotifier {
  readonly #listeners = new Map<string, Listener[]>();
  readonly #logger: Logger;

  constructor(logger: Logger = console) {
    this.#logger = logger;
  }

  /** Called once a change is stored: nothing a listener does may make that change look failed. */
  changed(charge: ChargeRecord): void {
    const listeners = this.#listeners.get(charge.reference);
    if (listeners === undefined) return;
    // A copy, as `emit` made: a listener that unsubscribes (its stream ends) must not skip another.
    for (const listener of listeners.slice()) {
      try {
        listener(charge);
      } catch (error) {
        this.#logger.error?.("purchase-auth: a live-update listener threw; the change is stored", {
          reference: charge.reference,
          error: String(error),
        });
      }
    }
  }

  /** How many references have a listener (each is forgotten with its last listener). */
  get watchedReferences(): number {
    return this.#listeners.size;
  }

  /** Calls `listener` with every change of the charge of `reference`; returns the unsubscribe. */
  subscribe(reference: string, listener: Listener): () => void {
    const listeners = this.#listeners.get(reference);
    if (listeners === undefined) this.#listeners.set(reference, [listener]);
    else listeners.push(listener);
    return () => this.#unsubscribe(reference, listener);
  }

  #unsubscribe(reference: string, listener: Listener): void {
    const listeners = this.#listeners.get(reference);
    const index = listeners?.lastIndexOf(listener) ?? -1;
    if (index === -1) return;
    listeners!.splice(index, 1);
    if (listeners!.length === 0) this.#listeners.delete(reference);
  }
}
