import type { CaptureMode, WebhookEvent } from "@purchase-auth/core";
import { isForwardMove, statusesAllowedBefore } from "../charges/state-machine.js";
import {
  MIGRATION_LOCK_KEY,
  POSTGRES_SCHEMA_SQL,
  pageQueries,
  SENT_WRITES,
  UNANSWERED,
} from "./postgres-schema.js";
import type {
  ChargeRecord,
  ChargeStatus,
  ChargeStore,
  MerchantOperation,
  PendingCursor,
  StoredWebhookEvent,
} from "./types.js";

/**
 * What the store needs of a `pg` Pool: a `pg.Pool` fits, so does a `pg.Client`. Declared here so
 * that this package never imports `pg` (an optional peer dependency) at run time.
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

export interface PostgresChargeStoreOptions {
  /** The app's `pg` Pool. The store never ends it. */
  pool: PostgresQueryable;
}

const UNIQUE_VIOLATION = "23505";

/** How much longer than applied ones `pruneWebhookEvents` keeps never-applied events, by default. */
const DEFAULT_UNAPPLIED_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

const CHARGE_COLUMNS =
  "reference, customer_id, attempt, authorization_id, order_id, status, reason, amount, currency, capture_mode, operations, version, previous_authorization_ids, order_fingerprint, pending_authorization, operation_log, created_at, updated_at";

/**
 * A store in PostgreSQL, for several app instances behind a load balancer: every write is one
 * atomic statement (INSERT … ON CONFLICT, a conditional UPDATE), so instances never overwrite each
 * other's news and a webhook stored by one is visible to all.
 */
export class PostgresChargeStore implements ChargeStore {
  readonly #pool: PostgresQueryable;

  constructor(options: PostgresChargeStoreOptions) {
    if (typeof options?.pool?.query !== "function") {
      throw new TypeError("PostgresChargeStore needs { pool }: a pg Pool (or anything with query())");
    }
    this.#pool = options.pool;
  }

  /** Creates the tables (idempotent; safe when several instances start at once). */
  async migrate(): Promise<void> {
    // Several statements in one query without parameters run as one implicit transaction on one
    // connection: the lock is held until the tables exist, and an error rolls everything back.
    await this.#pool.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY}); ${POSTGRES_SCHEMA_SQL}`);
  }

  async create(charge: ChargeRecord): Promise<{ charge: ChargeRecord; created: boolean }> {
    const inserted = await this.#query(
      `INSERT INTO purchase_auth_charges (${CHARGE_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)
       ON CONFLICT (reference) DO NOTHING
       RETURNING *`,
      [...chargeValues(charge), charge.createdAt, charge.updatedAt],
    );
    if (inserted[0]) return { charge: toCharge(inserted[0]), created: true };
    const existing = await this.findByReference(charge.reference);
    if (!existing) throw new Error(`Charge ${charge.reference} could be neither created nor read`);
    return { charge: existing, created: false };
  }

  async findByReference(reference: string): Promise<ChargeRecord | undefined> {
    const rows = await this.#query("SELECT * FROM purchase_auth_charges WHERE reference = $1", [reference]);
    return rows[0] && toCharge(rows[0]);
  }

  async findByAuthorizationId(authorizationId: string): Promise<ChargeRecord | undefined> {
    const rows = await this.#query("SELECT * FROM purchase_auth_charges WHERE authorization_id = $1", [
      authorizationId.toLowerCase(),
    ]);
    return rows[0] && toCharge(rows[0]);
  }

  async compareAndSet(expectedVersion: number, next: ChargeRecord): Promise<ChargeRecord | undefined> {
    if (next.version !== expectedVersion + 1) {
      throw new Error(`Charge ${next.reference}: the next version must be ${expectedVersion + 1}`);
    }
    // The WHERE clause is the state machine's rule: same version, and a forward move.
    const rows = await this.#query(
      `UPDATE purchase_auth_charges
          SET customer_id = $2, attempt = $3, authorization_id = $4, order_id = $5, status = $6,
              reason = $7, amount = $8, currency = $9, capture_mode = $10, operations = $11,
              version = $12, previous_authorization_ids = $13, order_fingerprint = $14,
              pending_authorization = $15, operation_log = $16, updated_at = $17
        WHERE reference = $1 AND version = $18
          AND (attempt < $3 OR (attempt = $3 AND status = ANY($19::text[])))
        RETURNING *`,
      [...chargeValues(next), next.updatedAt, expectedVersion, statusesAllowedBefore(next.status)],
    );
    if (rows[0]) return toCharge(rows[0]);
    const current = await this.findByReference(next.reference);
    if (current?.version === expectedVersion && !isForwardMove(current, next)) {
      throw new Error(`Charge ${next.reference}: refused to move backwards from ${current.status}`);
    }
    return undefined;
  }

  async listPending(limit: number, after?: PendingCursor): Promise<ChargeRecord[]> {
    return this.#pendingPage("status = 'pending'", limit, after);
  }

  async listUnanswered(limit: number, after?: PendingCursor): Promise<ChargeRecord[]> {
    return this.#pendingPage(UNANSWERED, limit, after);
  }

  async listSentWrites(limit: number, after?: PendingCursor): Promise<ChargeRecord[]> {
    return this.#pendingPage(SENT_WRITES, limit, after);
  }

  /** Keyset paging along the partial index whose condition is `where` (a constant of this file). */
  async #pendingPage(
    where: string,
    limit: number,
    after: PendingCursor | undefined,
  ): Promise<ChargeRecord[]> {
    const { first, after: next } = pageQueries(where);
    const rows =
      after === undefined
        ? await this.#query(first, [limit])
        : await this.#query(next, [limit, after.updatedAt, after.reference]);
    return rows.map(toCharge);
  }

  async listWithUnappliedEvents(limit: number, afterReference = ""): Promise<ChargeRecord[]> {
    // Driven from the partial index of unapplied events, each joined through the unique index on
    // authorization_id: the cost follows the unapplied events, not the size of the charges table.
    const rows = await this.#query(
      `SELECT c.* FROM (
         SELECT DISTINCT authorization_id FROM purchase_auth_webhook_events
         WHERE applied_at IS NULL AND authorization_id IS NOT NULL
       ) e
       JOIN purchase_auth_charges c ON c.authorization_id = e.authorization_id
       WHERE c.status <> 'pending' AND c.reference > $2
       ORDER BY c.reference LIMIT $1`,
      [limit, afterReference],
    );
    return rows.map(toCharge);
  }

  async recordEvent(event: StoredWebhookEvent): Promise<{ alreadyApplied: boolean }> {
    const inserted = await this.#query(
      `INSERT INTO purchase_auth_webhook_events (event_id, authorization_id, event, received_at)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (event_id) DO NOTHING
       RETURNING event_id`,
      [event.id, event.authorizationId?.toLowerCase() ?? null, JSON.stringify(event.event), event.receivedAt],
    );
    if (inserted.length > 0) return { alreadyApplied: false };
    const rows = await this.#query(
      "SELECT applied_at IS NOT NULL AS applied FROM purchase_auth_webhook_events WHERE event_id = $1",
      [event.id],
    );
    return { alreadyApplied: rows[0]?.applied === true };
  }

  async markEventApplied(eventId: string): Promise<void> {
    await this.#query(
      "UPDATE purchase_auth_webhook_events SET applied_at = now() WHERE event_id = $1 AND applied_at IS NULL",
      [eventId],
    );
  }

  async unappliedEvents(authorizationId: string): Promise<StoredWebhookEvent[]> {
    const rows = await this.#query(
      `SELECT event_id, authorization_id, event, received_at FROM purchase_auth_webhook_events
        WHERE authorization_id = $1 AND applied_at IS NULL
        ORDER BY received_at, event_id`,
      [authorizationId.toLowerCase()],
    );
    return rows.map((row) => ({
      id: String(row.event_id),
      authorizationId: String(row.authorization_id),
      event: row.event as WebhookEvent,
      receivedAt: isoString(row.received_at),
    }));
  }

  /**
   * Forgets applied webhook events received before `before` (deduplication only needs the window
   * in which the service redelivers: hours, not months), and events never applied received before
   * `unappliedBefore` (default: 30 days before `before`; such an event is about an authorization no
   * charge here ever learnt). Returns how many were deleted.
   */
  async pruneWebhookEvents(before: Date, options: { unappliedBefore?: Date } = {}): Promise<number> {
    const unappliedBefore =
      options.unappliedBefore ?? new Date(before.getTime() - DEFAULT_UNAPPLIED_RETENTION_MS);
    const rows = await this.#query(
      `DELETE FROM purchase_auth_webhook_events
        WHERE (applied_at IS NOT NULL AND received_at < $1)
           OR (applied_at IS NULL AND received_at < $2)
        RETURNING event_id`,
      [before.toISOString(), unappliedBefore.toISOString()],
    );
    return rows.length;
  }

  async #query(text: string, values: unknown[]): Promise<Array<Record<string, unknown>>> {
    try {
      return (await this.#pool.query(text, values)).rows;
    } catch (error) {
      if ((error as { code?: unknown }).code === UNIQUE_VIOLATION && /authorization_id/.test(String(error))) {
        throw new Error("The authorization id belongs to another charge", { cause: error });
      }
      throw error;
    }
  }
}

/** Parameters $1 to $16, in CHARGE_COLUMNS order. */
function chargeValues(charge: ChargeRecord): unknown[] {
  return [
    charge.reference,
    charge.customerId,
    charge.attempt,
    charge.authorizationId?.toLowerCase() ?? null,
    charge.orderId ?? null,
    charge.status,
    charge.reason ?? null,
    charge.amount,
    charge.currency,
    charge.captureMode,
    JSON.stringify(charge.operations),
    charge.version,
    charge.previousAuthorizationIds === undefined ? null : JSON.stringify(charge.previousAuthorizationIds),
    charge.orderFingerprint ?? null,
    charge.pendingAuthorization === undefined ? null : JSON.stringify(charge.pendingAuthorization),
    charge.operationLog === undefined ? null : JSON.stringify(charge.operationLog),
  ];
}

function toCharge(row: Record<string, unknown>): ChargeRecord {
  const charge: ChargeRecord = {
    reference: String(row.reference),
    customerId: String(row.customer_id),
    attempt: Number(row.attempt),
    status: row.status as ChargeStatus,
    amount: String(row.amount),
    currency: String(row.currency),
    captureMode: row.capture_mode as CaptureMode,
    operations: row.operations as Record<MerchantOperation, number>,
    version: Number(row.version),
    createdAt: isoString(row.created_at),
    updatedAt: isoString(row.updated_at),
  };
  if (row.authorization_id !== null) charge.authorizationId = String(row.authorization_id);
  if (row.order_id !== null) charge.orderId = String(row.order_id);
  if (row.reason !== null) charge.reason = String(row.reason);
  if (row.previous_authorization_ids != null) {
    charge.previousAuthorizationIds = (row.previous_authorization_ids as unknown[]).map(String);
  }
  if (row.order_fingerprint != null) charge.orderFingerprint = String(row.order_fingerprint);
  if (row.pending_authorization != null) {
    charge.pendingAuthorization = row.pending_authorization as ChargeRecord["pendingAuthorization"];
  }
  if (row.operation_log != null) charge.operationLog = row.operation_log as ChargeRecord["operationLog"];
  return charge;
}

/** pg returns timestamptz as a Date (or a string when a type parser says so). */
function isoString(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}
