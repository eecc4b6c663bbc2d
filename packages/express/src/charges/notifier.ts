import { EventEmitter } from "node:events";
import type { ChargeRecord } from "../stores/types.js";

/**
 * Tells live-update streams of this process that a charge changed, so they answer at once.
 * Changes made by other instances reach them by polling the store instead.
 */
export class ChargeNotifier {
  readonly #emitter = new EventEmitter();

  constructor() {
    // One listener per open stream; many shoppers may watch at once.
    this.#emitter.setMaxListeners(0);
  }

  changed(charge: ChargeRecord): void {
    this.#emitter.emit(charge.reference, charge);
  }

  /** Calls `listener` with every change of the charge of `reference`; returns the unsubscribe. */
  subscribe(reference: string, listener: (charge: ChargeRecord) => void): () => void {
    this.#emitter.on(reference, listener);
    return () => this.#emitter.off(reference, listener);
  }
}
