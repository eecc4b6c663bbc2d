import { type ChargeItem, fingerprintOf, storedItemOf } from "../items.js";
import { conflict } from "./memory.js";
import { BATCH_MIGRATION_LOCK_KEY, BATCH_SCHEMA_SQL } from "./postgres-schema.js";
import {
  type AttemptLogEntry,
  addToCounts,
  type BatchItemRecord,
  type BatchStore,
  type ChargeResult,
  emptyCounts,
  type ItemChange,
  type ItemStatus,
  OPEN_STATUSES,
  type OpenItemView,
  type RegisterResult,
  type StatusCounts,
} from "./types.js";

/**
 * What the store needs of a `pg` Pool (a `pg.Pool` or `pg.Client` fits). Declared here so this
 * package never imports `pg`, an optional peer dependency, at run time.
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

export interface PostgresBatchStoreOptions {
  /** The app's `pg` Pool. The store never ends it. */
  pool: PostgresQueryable;
  /** Items per INSERT when registering; default 1,000. */
  registerChunkSize?: number;
}

const OPEN_SQL = `(${OPEN_STATUSES.map((status) => `'${status}'`).join(", ")})`;
const COLUMNS =
  "batch_id, item_id, seq, item, status, attempt, idempotency_key, request, first_sent_at, not_before, reason, result, log, version, updated_at";

/**
 * Batch state in PostgreSQL: what makes a run resumable after a crash and lets many workers (in
 * many processes) share a batch. Every change is one conditional UPDATE (a compare-and-set on the
 * version), so an outcome is stored in the same statement as the status it changes.
 */
export class PostgresBatchStore implements BatchStore {
  readonly #pool: PostgresQueryable;
  readonly #chunk: number;
  #migrated: Promise<void> | undefined;

  constructor(options: PostgresBatchStoreOptions) {
    if (typeof options?.pool?.query !== "function") {
      throw new TypeError("PostgresBatchStore needs { pool }: a pg Pool (or anything with query())");
    }
    this.#pool = options.pool;
    this.#chunk = options.registerChunkSize ?? 1_000;
  }

  /** Creates the table (idempotent; once per store object; safe when several workers start at once). */
  migrate(): Promise<void> {
    this.#migrated ??= this.#pool
      .query(`SELECT pg_advisory_xact_lock(${BATCH_MIGRATION_LOCK_KEY}); ${BATCH_SCHEMA_SQL}`)
      .then(
        () => {},
        (error: unknown) => {
          this.#migrated = undefined;
          throw error;
        },
      );
    return this.#migrated;
  }

  async register(
    batchId: string,
    items: ReadonlyArray<ChargeItem>,
    invalid: ReadonlyMap<string, string> = new Map(),
  ): Promise<RegisterResult> {
    const result: RegisterResult = { added: 0, existing: 0 };
    for (let start = 0; start < items.length; start += this.#chunk) {
      const chunk = items.slice(start, start + this.#chunk).map(storedItemOf);
      const rows = chunk.map((item) => ({
        item_id: item.itemId,
        fingerprint: fingerprintOf(item),
        item,
        status: invalid.has(item.itemId) ? "rejected" : "pending",
        reason: invalid.get(item.itemId) ?? null,
      }));
      // One statement per chunk; ON CONFLICT keeps what was registered first (and its progress).
      const inserted = await this.#pool.query(
        `INSERT INTO purchase_auth_batch_items (batch_id, item_id, fingerprint, item, status, reason)
         SELECT $1, r.item_id, r.fingerprint, r.item, r.status, r.reason
         FROM jsonb_to_recordset($2::jsonb) AS r(item_id text, fingerprint text, item jsonb, status text, reason text)
         ON CONFLICT (batch_id, item_id) DO NOTHING
         RETURNING item_id`,
        [batchId, JSON.stringify(rows)],
      );
      result.added += inserted.rows.length;
      if (inserted.rows.length === rows.length) continue;
      const added = new Set(inserted.rows.map((row) => row.item_id as string));
      const others = rows.filter((row) => !added.has(row.item_id));
      const known = await this.#pool.query(
        "SELECT item_id, fingerprint FROM purchase_auth_batch_items WHERE batch_id = $1 AND item_id = ANY($2::text[])",
        [batchId, others.map((row) => row.item_id)],
      );
      const fingerprints = new Map(
        known.rows.map((row) => [row.item_id as string, row.fingerprint as string]),
      );
      for (const row of others) {
        if (fingerprints.get(row.item_id) !== row.fingerprint) throw conflict(batchId, row.item_id);
        result.existing++;
      }
    }
    return result;
  }

  async get(batchId: string, itemId: string): Promise<BatchItemRecord | undefined> {
    const found = await this.#pool.query(
      `SELECT ${COLUMNS} FROM purchase_auth_batch_items WHERE batch_id = $1 AND item_id = $2`,
      [batchId, itemId],
    );
    return found.rows[0] === undefined ? undefined : recordOf(found.rows[0]);
  }

  async transition(
    record: BatchItemRecord,
    change: ItemChange,
    now: Date,
  ): Promise<BatchItemRecord | undefined> {
    const sets = ["status = $4", "version = version + 1", "updated_at = $5"];
    const values: unknown[] = [record.batchId, record.itemId, record.version, change.status, now];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (change.attempt !== undefined) set("attempt", change.attempt);
    if (change.idempotencyKey !== undefined) set("idempotency_key", change.idempotencyKey);
    if (change.request !== undefined) set("request", change.request);
    if (change.firstSentAt !== undefined) set("first_sent_at", change.firstSentAt);
    if (change.notBefore !== undefined) set("not_before", change.notBefore);
    if (change.reason !== undefined) set("reason", change.reason);
    if (change.result !== undefined)
      set("result", change.result === null ? null : JSON.stringify(change.result));
    if (change.appendLog !== undefined) {
      values.push(JSON.stringify([change.appendLog]));
      sets.push(`log = log || $${values.length}::jsonb`);
    }
    const updated = await this.#pool.query(
      `UPDATE purchase_auth_batch_items SET ${sets.join(", ")}
       WHERE batch_id = $1 AND item_id = $2 AND version = $3
       RETURNING ${COLUMNS}`,
      values,
    );
    return updated.rows[0] === undefined ? undefined : recordOf(updated.rows[0]);
  }

  async due(batchId: string, now: Date, afterSeq: number, limit: number): Promise<BatchItemRecord[]> {
    const found = await this.#pool.query(
      `SELECT ${COLUMNS} FROM purchase_auth_batch_items
       WHERE batch_id = $1 AND status IN ${OPEN_SQL} AND seq > $3 AND (not_before IS NULL OR not_before <= $2)
       ORDER BY seq LIMIT $4`,
      [batchId, now, afterSeq, limit],
    );
    return found.rows.map(recordOf);
  }

  async open(batchId: string, limit: number): Promise<OpenItemView[]> {
    const found = await this.#pool.query(
      `SELECT item_id, status, not_before FROM purchase_auth_batch_items
       WHERE batch_id = $1 AND status IN ${OPEN_SQL} ORDER BY not_before NULLS FIRST, seq LIMIT $2`,
      [batchId, limit],
    );
    return found.rows.map((row) => ({
      itemId: row.item_id as string,
      status: row.status as ItemStatus,
      ...(row.not_before == null ? {} : { notBefore: new Date(row.not_before as Date) }),
    }));
  }

  async counts(batchId: string): Promise<StatusCounts> {
    const found = await this.#pool.query(
      `SELECT status, CASE WHEN status IN ('declined', 'rejected', 'needs_review') THEN reason END AS reason,
              count(*)::int AS n
       FROM purchase_auth_batch_items WHERE batch_id = $1 GROUP BY 1, 2`,
      [batchId],
    );
    const counts = emptyCounts();
    for (const row of found.rows) {
      addToCounts(
        counts,
        row.status as ItemStatus,
        (row.reason as string | null) ?? undefined,
        row.n as number,
      );
    }
    return counts;
  }

  async *items(batchId: string, pageSize = 1_000): AsyncIterable<BatchItemRecord> {
    let after = -1;
    for (;;) {
      const page = await this.#pool.query(
        `SELECT ${COLUMNS} FROM purchase_auth_batch_items WHERE batch_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [batchId, after, pageSize],
      );
      if (page.rows.length === 0) return;
      for (const row of page.rows) {
        const record = recordOf(row);
        after = record.seq;
        yield record;
      }
    }
  }
}

function recordOf(row: Record<string, unknown>): BatchItemRecord {
  const optionalDate = (value: unknown) => (value == null ? undefined : new Date(value as Date));
  const firstSentAt = optionalDate(row.first_sent_at);
  const notBefore = optionalDate(row.not_before);
  return {
    batchId: row.batch_id as string,
    itemId: row.item_id as string,
    seq: Number(row.seq),
    item: row.item as ChargeItem,
    status: row.status as ItemStatus,
    attempt: row.attempt as number,
    ...(row.idempotency_key == null ? {} : { idempotencyKey: row.idempotency_key as string }),
    ...(row.request == null ? {} : { request: row.request as string }),
    ...(firstSentAt === undefined ? {} : { firstSentAt }),
    ...(notBefore === undefined ? {} : { notBefore }),
    ...(row.reason == null ? {} : { reason: row.reason as string }),
    ...(row.result == null ? {} : { result: row.result as ChargeResult }),
    log: (row.log as AttemptLogEntry[] | null) ?? [],
    version: row.version as number,
    updatedAt: new Date(row.updated_at as Date),
  };
}
