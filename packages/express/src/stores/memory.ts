import type { Logger } from "@purchase-auth/core";
import { copyCharge, isForwardMove, isSettled } from "../charges/state-machine.js";
import { byPendingOrder, comesAfter } from "./pending-order.js";
import type { ChargeRecord, ChargeStore, PendingCursor, StoredWebhookEvent } from "./types.js";

export interface MemoryChargeStoreOptions {
  /** Webhook event ids remembered for deduplication; the oldest are forgotten beyond. Default 100,000. */
  maxEvents?: number;
  /**
   * Charges kept. Beyond, the store forgets the settled charge written longest ago (failed,
   * captured, partially refunded, refunded, cancelled or expired). Only when every charge is open
   * (pending, authorized, partially captured) does it forget the open one written longest ago, and
   * warn. Default 100,000.
   */
  maxCharges?: number;
  /** Receives that warning. The router gives the store it creates its own `logger`. */
  logger?: Logger;
}

const DEFAULT_MAX_CHARGES = 100_000;
const DEFAULT_MAX_EVENTS = 100_000;

/**
 * The default store: a process's memory, bounded (`maxCharges`, `maxEvents`). Right for
 * development, tests and a single instance; its state is lost on restart and not shared, so run
 * several instances on `PostgresChargeStore`.
 *
 * Records are copied on the way in and frozen, and returned as they are: nobody can change the
 * store's state behind its back, and reads cost no copy. Treat returned records as read-only
 * (spread one to make a changed copy).
 */
export class MemoryChargeStore implements ChargeStore {
  /** Every charge by reference, each a frozen record. */
  readonly #charges = new Map<string, ChargeRecord>();
  /**
   * The references of the settled charges and of the open ones. Each write moves its reference to
   * the end, so each set iterates from the charge written longest ago: the order of eviction.
   */
  readonly #settled = new Set<string>();
  readonly #open = new Set<string>();
  /** The references of the charges with a merchant write still `sent` (listSentWrites). */
  readonly #sentWrites = new Set<string>();
  readonly #referenceByAuthorization = new Map<string, string>();
  readonly #events = new Map<string, { stored: StoredWebhookEvent; applied: boolean }>();
  /** Ids of the events not applied yet, per authorization id (so attaching one is not a scan). */
  readonly #unapplied = new Map<string, Set<string>>();
  readonly #maxEvents: number;
  readonly #maxCharges: number;
  readonly #logger: Logger | undefined;

  constructor(options: MemoryChargeStoreOptions = {}) {
    this.#maxEvents = positiveWholeNumber(options.maxEvents ?? DEFAULT_MAX_EVENTS, "maxEvents");
    this.#maxCharges = positiveWholeNumber(options.maxCharges ?? DEFAULT_MAX_CHARGES, "maxCharges");
    this.#logger = options.logger;
  }

  async create(charge: ChargeRecord): Promise<{ charge: ChargeRecord; created: boolean }> {
    const existing = this.#charges.get(charge.reference);
    if (existing) return { charge: existing, created: false };
    const record = frozenCopy(charge);
    if (record.authorizationId !== undefined) this.#claimAuthorizationId(record);
    this.#makeRoom();
    this.#put(record, undefined);
    return { charge: record, created: true };
  }

  async findByReference(reference: string): Promise<ChargeRecord | undefined> {
    return this.#charges.get(reference);
  }

  async findByAuthorizationId(authorizationId: string): Promise<ChargeRecord | undefined> {
    const reference = this.#referenceByAuthorization.get(authorizationId.toLowerCase());
    return reference === undefined ? undefined : this.#charges.get(reference);
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
    const record = frozenCopy(next);
    // The same id as before is this charge's already (most changes after the first answer).
    if (record.authorizationId !== current.authorizationId) {
      if (record.authorizationId !== undefined) this.#claimAuthorizationId(record);
      const previousId = current.authorizationId?.toLowerCase();
      if (previousId !== undefined && previousId !== record.authorizationId?.toLowerCase()) {
        this.#referenceByAuthorization.delete(previousId);
      }
    }
    this.#put(record, current);
    return record;
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
    this.#forgetOldEvents();
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
    const ids = this.#unapplied.get(authorizationId.toLowerCase());
    if (ids === undefined) return [];
    return [...ids].map((id) => structuredClone(this.#events.get(id)!.stored));
  }

  async listPending(limit: number, after?: PendingCursor): Promise<ChargeRecord[]> {
    return this.#pendingPage(limit, after, false);
  }

  async listUnanswered(limit: number, after?: PendingCursor): Promise<ChargeRecord[]> {
    return this.#pendingPage(limit, after, true);
  }

  async listSentWrites(limit: number, after?: PendingCursor): Promise<ChargeRecord[]> {
    const page: ChargeRecord[] = [];
    for (const reference of this.#sentWrites) {
      const charge = this.#charges.get(reference)!;
      if (after === undefined || comesAfter(charge, after)) insertInOrder(page, charge, limit);
    }
    return page;
  }

  #pendingPage(limit: number, after: PendingCursor | undefined, unansweredOnly: boolean): ChargeRecord[] {
    // Every open charge is looked at: write order is not quite `updatedAt` order (two changes
    // computed concurrently, or in one millisecond), and a page must not skip one. The page is
    // kept sorted as it fills; in near write order most charges land past its end at once.
    const page: ChargeRecord[] = [];
    for (const reference of this.#open) {
      const charge = this.#charges.get(reference);
      if (charge?.status !== "pending" || (after !== undefined && !comesAfter(charge, after))) continue;
      if (unansweredOnly && charge.authorizationId !== undefined) continue;
      insertInOrder(page, charge, limit);
    }
    return page;
  }

  async listWithUnappliedEvents(limit: number, afterReference = ""): Promise<ChargeRecord[]> {
    const charges: ChargeRecord[] = [];
    for (const authorizationId of this.#unapplied.keys()) {
      const reference = this.#referenceByAuthorization.get(authorizationId);
      const charge = reference === undefined ? undefined : this.#charges.get(reference);
      if (charge && charge.status !== "pending" && charge.reference > afterReference) charges.push(charge);
    }
    charges.sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0));
    return charges.slice(0, limit);
  }

  /**
   * Forgets the oldest applied events beyond `maxEvents`. An unapplied event is news not yet
   * applied to its charge: forgotten only when every event held is unapplied, with a warning.
   */
  #forgetOldEvents(): void {
    if (this.#events.size <= this.#maxEvents) return;
    // Maps iterate in insertion order: the first keys are the oldest events.
    for (const [id, known] of this.#events) {
      if (this.#events.size <= this.#maxEvents) return;
      if (known.applied) this.#events.delete(id);
    }
    for (const [id, known] of this.#events) {
      if (this.#events.size <= this.#maxEvents) return;
      this.#logger?.warn?.(
        "purchase-auth: MemoryChargeStore holds maxEvents unapplied webhook events; forgetting the oldest. Raise maxEvents, or use PostgresChargeStore",
        { eventId: id, maxEvents: this.#maxEvents },
      );
      this.#forgetEvent(id, known.stored);
    }
  }

  #forgetEvent(id: string, stored: StoredWebhookEvent): void {
    this.#events.delete(id);
    const authorizationId = stored.authorizationId?.toLowerCase();
    const ids = authorizationId === undefined ? undefined : this.#unapplied.get(authorizationId);
    ids?.delete(id);
    if (ids?.size === 0) this.#unapplied.delete(authorizationId!);
  }

  /**
   * Stores a record and moves its reference to the end of its eviction order. A reference is in
   * the set of its stored record's status only: it leaves that one (none for a new charge).
   */
  #put(record: ChargeRecord, previous: ChargeRecord | undefined): void {
    const { reference } = record;
    this.#charges.set(reference, record);
    if (previous !== undefined) this.#evictionOrderOf(previous).delete(reference);
    this.#evictionOrderOf(record).add(reference);
    if (hasSentWrite(record)) this.#sentWrites.add(reference);
    else this.#sentWrites.delete(reference);
  }

  /** A charge with a write still `sent` is open: forgotten, the write would never be settled. */
  #evictionOrderOf(charge: ChargeRecord): Set<string> {
    return isSettled(charge.status) && !hasSentWrite(charge) ? this.#settled : this.#open;
  }

  /** Forgets charges until one more fits: settled ones first, an open one only when none is left. */
  #makeRoom(): void {
    while (this.#charges.size >= this.#maxCharges) {
      const settled = oldest(this.#settled);
      if (settled !== undefined) {
        this.#forget(settled);
        continue;
      }
      const open = oldest(this.#open)!;
      this.#logger?.warn?.(
        "purchase-auth: MemoryChargeStore holds maxCharges open charges; forgetting the oldest open one. Raise maxCharges, or use PostgresChargeStore",
        { reference: open, status: this.#charges.get(open)?.status, maxCharges: this.#maxCharges },
      );
      this.#forget(open);
    }
  }

  #forget(reference: string): void {
    const charge = this.#charges.get(reference);
    this.#charges.delete(reference);
    this.#settled.delete(reference);
    this.#open.delete(reference);
    this.#sentWrites.delete(reference);
    const id = charge?.authorizationId?.toLowerCase();
    if (id !== undefined && this.#referenceByAuthorization.get(id) === reference) {
      this.#referenceByAuthorization.delete(id);
    }
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

/** The store's own frozen copy of a caller's record, its `operations` frozen too. */
function frozenCopy(charge: ChargeRecord): ChargeRecord {
  const copy = copyCharge(charge);
  Object.freeze(copy.operations);
  if (copy.previousAuthorizationIds !== undefined) Object.freeze(copy.previousAuthorizationIds);
  if (copy.operationLog !== undefined) Object.freeze(copy.operationLog);
  return Object.freeze(copy);
}

/** True when the charge's operation log holds a write whose answer is not known yet. */
function hasSentWrite(charge: ChargeRecord): boolean {
  const log = charge.operationLog;
  if (log === undefined) return false;
  for (const id in log) if (log[id]!.state === "sent") return true;
  return false;
}

/** Puts `charge` in its place in the sorted `page`, which never grows past `limit` (the last drop). */
function insertInOrder(page: ChargeRecord[], charge: ChargeRecord, limit: number): void {
  const last = page[page.length - 1];
  if (last === undefined || byPendingOrder(last, charge) <= 0) {
    if (page.length < limit) page.push(charge);
    return;
  }
  let low = 0;
  let high = page.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (byPendingOrder(page[middle]!, charge) <= 0) low = middle + 1;
    else high = middle;
  }
  page.splice(low, 0, charge);
  if (page.length > limit) page.pop();
}

/** The first value of a set: the one added longest ago. */
function oldest(values: Set<string>): string | undefined {
  for (const value of values) return value;
  return undefined;
}

function positiveWholeNumber(value: number, option: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new TypeError(`MemoryChargeStore option ${option} must be a positive whole number`);
  }
  return value;
}
