// The table of `PostgresBatchStore`. Run `store.migrate()` at start-up, or apply this SQL with your
// own migration tool (idempotent). `migrate()` holds an advisory lock so that several workers
// starting together do not race each other.

/** Arbitrary constant key of the advisory lock `migrate()` holds while it creates the table. */
export const BATCH_MIGRATION_LOCK_KEY = 7_340_991_377;

export const BATCH_SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS purchase_auth_batch_items (
  batch_id         text NOT NULL,
  item_id          text NOT NULL,
  seq              bigserial,
  fingerprint      text NOT NULL,
  item             jsonb NOT NULL,   -- holds the customer token: never log it
  status           text NOT NULL,
  attempt          integer NOT NULL DEFAULT 0,
  idempotency_key  text,
  request          text,             -- the exact body of the current attempt, written before sending
  first_sent_at    timestamptz,
  not_before       timestamptz,
  reason           text,
  result           jsonb,
  log              jsonb NOT NULL DEFAULT '[]'::jsonb,
  version          integer NOT NULL DEFAULT 0,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (batch_id, item_id)
);

CREATE INDEX IF NOT EXISTS purchase_auth_batch_items_seq ON purchase_auth_batch_items (batch_id, seq);

CREATE INDEX IF NOT EXISTS purchase_auth_batch_items_open
  ON purchase_auth_batch_items (batch_id, seq)
  WHERE status IN ('pending', 'sending', 'unknown', 'retry_scheduled');
`.trim();
