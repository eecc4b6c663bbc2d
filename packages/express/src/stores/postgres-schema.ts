// The tables of `PostgresChargeStore`. Run `store.migrate()` at start-up, or apply this SQL with your
// own migration tool. It is idempotent (IF NOT EXISTS, ADD COLUMN IF NOT EXISTS); `migrate()` also takes an advisory lock so
// two instances starting together do not race each other.

/** Arbitrary constant key of the advisory lock `migrate()` holds while it creates the tables. */
export const MIGRATION_LOCK_KEY = 7_340_991_205;

/**
 * The charges whose operation log holds a merchant write still `sent` (listSentWrites): the
 * condition of their partial index, written the same in the query so the planner uses it.
 */
/** The pending charges whose create call has no known answer (listUnanswered): their index's condition. */
export const UNANSWERED = "status = 'pending' AND authorization_id IS NULL";

export const SENT_WRITES = `operation_log @? '$.* ? (@.state == "sent")'`;

/**
 * The keyset-paged queries along a partial index whose condition is `where` (listPending,
 * listUnanswered, listSentWrites): the first page ($1: the limit), and the page after a cursor
 * ($2, $3: its updated_at and reference). The store runs exactly these; its tests EXPLAIN them.
 */
export function pageQueries(where: string): { first: string; after: string } {
  return {
    first: `SELECT * FROM purchase_auth_charges WHERE ${where} ORDER BY updated_at, reference LIMIT $1`,
    after: `SELECT * FROM purchase_auth_charges
             WHERE ${where} AND (updated_at, reference) > ($2::timestamptz, $3)
             ORDER BY updated_at, reference LIMIT $1`,
  };
}

export const POSTGRES_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS purchase_auth_charges (
  reference        text PRIMARY KEY,
  customer_id      text NOT NULL,
  attempt          integer NOT NULL,
  authorization_id text UNIQUE,
  order_id         text,
  status           text NOT NULL,
  reason           text,
  amount           text NOT NULL, -- a decimal string, exactly as sent ("120.50")
  currency         text NOT NULL,
  capture_mode     text NOT NULL,
  operations       jsonb NOT NULL,
  version          integer NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);

-- Added after the first release: idempotent for tables created by an earlier version.
ALTER TABLE purchase_auth_charges ADD COLUMN IF NOT EXISTS previous_authorization_ids jsonb;
ALTER TABLE purchase_auth_charges ADD COLUMN IF NOT EXISTS order_fingerprint text;
-- Write-ahead records: the create call of the current attempt, and the merchant writes.
ALTER TABLE purchase_auth_charges ADD COLUMN IF NOT EXISTS pending_authorization jsonb;
ALTER TABLE purchase_auth_charges ADD COLUMN IF NOT EXISTS operation_log jsonb;

CREATE INDEX IF NOT EXISTS purchase_auth_charges_pending
  ON purchase_auth_charges (updated_at)
  WHERE status = 'pending';
-- The reconciler pages through pending charges in this order (listPending). It replaces the index
-- above, which earlier releases use: that one is dropped in a later major release, not while
-- instances of both may run.
CREATE INDEX IF NOT EXISTS purchase_auth_charges_pending_order
  ON purchase_auth_charges (updated_at, reference)
  WHERE status = 'pending';
-- The pending charges whose create call has no known answer, looked at first by every pass
-- (listUnanswered): found without reading the accepted ones that wait for their schedule.
CREATE INDEX IF NOT EXISTS purchase_auth_charges_unanswered
  ON purchase_auth_charges (updated_at, reference)
  WHERE ${UNANSWERED};
-- The charges with a merchant write whose answer is not known yet (listSentWrites), whatever their
-- status: the reconciler sends them again, or settles them, without reading the other charges.
-- (jsonpath: PostgreSQL 12 or later.)
CREATE INDEX IF NOT EXISTS purchase_auth_charges_sent_writes
  ON purchase_auth_charges (updated_at, reference)
  WHERE ${SENT_WRITES};

CREATE TABLE IF NOT EXISTS purchase_auth_webhook_events (
  event_id         text PRIMARY KEY,
  authorization_id text,
  event            jsonb NOT NULL,
  received_at      timestamptz NOT NULL,
  applied_at       timestamptz
);

CREATE INDEX IF NOT EXISTS purchase_auth_webhook_events_unapplied
  ON purchase_auth_webhook_events (authorization_id, received_at)
  WHERE applied_at IS NULL;
`.trim();
