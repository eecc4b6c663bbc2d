import { isForwardMove } from "../charges/state-machine.js";
import type { ChargeRecord, ChargeStore, StoredWebhookEvent } from "./types.js";

export interface MemoryChargeStoreOptions {
  /** Webhook event ids remembered for deduplication; the oldest are forgotten beyond. Default 100,000. */
  maxEvents?: number;
}

/**
 * The default store: a process's memory. Right for development, tests and a single instance; its
 * state is lost on restart and not shared, so run several instances on `PostgresChargeStore`.
 * Records are copied in and out, so nobody can change the store's state behind its back.
 */
export class MemoryChargeStore implements ChargeStore {
  readonly #charges = new Map<string, ChargeRecord>();
  readonly #referenceByAuthorization = new Map<string, string>();
  readonly #events = new Map<string, { stored: StoredWebhookEvent; applied: boolean }>();
  /** Ids of the events not applied yet, per authorization id (so attaching one is not a scan). */
  readonly #unapplied = new Map<string, Set<string>>();
  readonly #maxEvents: number;

  constructor(options: MemoryChargeStoreOptions = {}) {
    const maxEvents = options.maxEvents ?? 100_000;
    if (!Number.isInteger(maxEvents) || maxEvents < 1) {
      throw new TypeError("MemoryChargeStore option maxEvents must be a positive whole number");
    }
    this.#maxEvents = maxEvents;
  }

  async create(charge: ChargeRecord): Promise<{ charge: ChargeRecord; created: boolean }> {
    const existing = this.#charges.get(charge.reference);
    if (existing) return { charge: structuredClone(existing), created: false };
    if (charge.authorizationId !== undefined) this.#claimAuthorizationId(charge);
    this.#charges.set(charge.reference, structuredClone(charge));
    return { charge: structuredClone(charge), created: true };
  }

  async findByReference(reference: string): Promise<ChargeRecord | undefined> {
    const charge = this.#charges.get(reference);
    return charge && structuredClone(charge);
  }

  async findByAuthorizationId(authorizationId: string): Promise<ChargeRecord | undefined> {
    const reference = this.#referenceByAuthorization.get(authorizationId.toLowerCase());
    return reference === undefined ? undefined : this.findByReference(reference);
  }

  async compareAndSet(expectedVersion: number, next: ChargeRecord): Promise<ChargeRecord | undefined> {
    const current = this.#charges.get(next.reference);
    if (!current || current.version !== expectedVersion) return undefined;
    if (next.version !== expectedVersion + 1) {
      throw new Error(`Charge ${next.reference}: the next version must be ${expectedVersion + 1}`);
    }
    if (!isForwardMove(current, next)) {
      throw new Error(`Charge ${next.reference}: refused to move backwards from ${current.status}`);
    }
    if (next.authorizationId !== undefined) this.#claimAuthorizationId(next);
    if (current.authorizationId !== undefined && current.authorizationId !== next.authorizationId) {
      this.#referenceByAuthorization.delete(current.authorizationId);
    }
    this.#charges.set(next.reference, structuredClone(next));
    return structuredClone(next);
  }

  async recordEvent(event: StoredWebhookEvent): Promise<{ alreadyApplied: boolean }> {
    const known = this.#events.get(event.id);
    if (known) return { alreadyApplied: known.applied };
    this.#events.set(event.id, { stored: structuredClone(event), applied: false });
    const authorizationId = event.authorizationId?.toLowerCase();
    if (authorizationId !== undefined) {
      const ids = this.#unapplied.get(authorizationId) ?? new Set<string>();
      this.#unapplied.set(authorizationId, ids.add(event.id));
    }
    // Maps iterate in insertion order: the first keys are the oldest events.
    for (const id of this.#events.keys()) {
      if (this.#events.size <= this.#maxEvents) break;
      await this.markEventApplied(id);
      this.#events.delete(id);
    }
    return { alreadyApplied: false };
  }

  async markEventApplied(eventId: string): Promise<void> {
    const known = this.#events.get(eventId);
    if (!known) return;
    known.applied = true;
    const authorizationId = known.stored.authorizationId?.toLowerCase();
    const ids = authorizationId === undefined ? undefined : this.#unapplied.get(authorizationId);
    ids?.delete(eventId);
    if (ids?.size === 0) this.#unapplied.delete(authorizationId!);
  }

  async unappliedEvents(authorizationId: string): Promise<StoredWebhookEvent[]> {
    const ids = this.#unapplied.get(authorizationId.toLowerCase()) ?? new Set<string>();
    return [...ids].map((id) => structuredClone(this.#events.get(id)!.stored));
  }

  /** Throws when another charge holds the authorization id; otherwise indexes it. */
  #claimAuthorizationId(charge: ChargeRecord): void {
    const id = charge.authorizationId!.toLowerCase();
    const holder = this.#referenceByAuthorization.get(id);
    if (holder !== undefined && holder !== charge.reference) {
      throw new Error(`Authorization ${id} belongs to another charge`);
    }
    this.#referenceByAuthorization.set(id, charge.reference);
  }
}
