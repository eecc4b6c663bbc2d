import type { MedusaContainer } from "@medusajs/framework/types";
import type { Knex } from "../providers/purchase-auth/session-sql";
import { knexOf } from "./lookups";
import type { Unsent } from "./set-aside";

// The recorded-writes pass (recorded-writes.ts) redoes a capture or refund Medusa recorded that a
// crash kept from the service. A redo that fails every run (the service refuses it for a reason
// other than its order's state, Medusa's own workflow rejects it, e.g. a refund whose refund reason
// was deleted, or the service stays unreachable) would be tried, and logged, for ever. Its tries
// are counted on the row set aside (`metadata.purchase_auth_redo` of the capture or refund row:
// Medusa never touches a soft-deleted row, so the count survives restarts and crashes, and the
// plugin adds no table). Once the bounds below are passed the pass gives up and asks a person
// (recorded-writes-review.ts).

/**
 * The least number of tries of one set-aside row's redo before the pass gives up on it. With the
 * job every 5 minutes the time bound below decides; this one keeps a job that ran only a few times
 * meanwhile (stopped, or run by hand) from giving up on too little evidence.
 */
export const RECORDED_WRITE_MAX_TRIES = 5;

/**
 * How long after its first try a set-aside row's redo may keep failing before the pass gives up on
 * it (and it has been tried RECORDED_WRITE_MAX_TRIES times). The same 4 hours the job waits before
 * asking a person about a release that keeps failing (RELEASE_REVIEW_AFTER_MS): well beyond an
 * ordinary outage of the service, which is ridden out quietly (a WARN line each try), and soon
 * enough for a person to act while the authorization still stands.
 */
export const RECORDED_WRITE_GIVE_UP_AFTER_MS = 4 * 60 * 60_000;

/** The key of a set-aside row's metadata where the pass keeps its redo's tries. */
export const REDO_TRIES_KEY = "purchase_auth_redo";

/** A set-aside row's redo so far, from its metadata. */
export interface RedoTries {
  /** Tries started (counted before each, so one a crash cut short counts too). */
  tries: number;
  /** The pass's clock at the first try (ISO 8601). */
  first_tried_at: string | null;
  /** The last failure's message, shortened. */
  last_error: string | null;
  /** Set when the pass gave up on it (ISO 8601). */
  given_up_at: string | null;
  /**
   * This process's clock as the last try began (ISO 8601), the clock Medusa stamps the redo's row
   * with: only a row recorded after it can be the redo's (set-aside.ts, redoRowOf).
   */
  redo_started_at: string | null;
  /**
   * The plugin's rows a person was asked about when the pass gave up on this one (lookalikesOf):
   * answered, the row is sent whatever those rows are.
   */
  asked_about: string[];
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** The redo's tries so far, as the row's metadata holds them. */
export function redoTriesOf(metadata: Record<string, unknown> | null | undefined): RedoTries {
  const raw = metadata?.[REDO_TRIES_KEY];
  const kept = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
  return {
    tries: typeof kept.tries === "number" && Number.isInteger(kept.tries) ? kept.tries : 0,
    first_tried_at: text(kept.first_tried_at),
    last_error: text(kept.last_error),
    given_up_at: text(kept.given_up_at),
    redo_started_at: text(kept.redo_started_at),
    asked_about: Array.isArray(kept.asked_about)
      ? kept.asked_about.filter((id): id is string => typeof id === "string")
      : [],
  };
}

/** True once the redo was tried often and long enough to give up on it. */
export function triedOut(tries: RedoTries, now: Date): boolean {
  const first = tries.first_tried_at ? Date.parse(tries.first_tried_at) : Number.NaN;
  return (
    tries.tries >= RECORDED_WRITE_MAX_TRIES &&
    Number.isFinite(first) &&
    now.getTime() - first >= RECORDED_WRITE_GIVE_UP_AFTER_MS
  );
}

/** Merges `entries` into the row's redo record (one statement); returns the record written. */
export async function mergeTries(
  container: MedusaContainer,
  unsent: Unsent,
  entries: string,
  bindings: unknown[],
  db: Knex = knexOf(container),
): Promise<RedoTries> {
  const { rows } = await db.raw(
    `update ${unsent.kind} set metadata = coalesce(metadata, '{}'::jsonb) || jsonb_build_object('${REDO_TRIES_KEY}',
       coalesce(metadata->'${REDO_TRIES_KEY}', '{}'::jsonb) || jsonb_build_object(${entries}))
     where id = ? and deleted_at is not null returning metadata`,
    [...bindings, unsent.row.id],
  );
  const metadata = (rows[0] as { metadata?: Record<string, unknown> | null } | undefined)?.metadata;
  return redoTriesOf(metadata);
}

/**
 * Counts one more try of the row's redo, before it is made; the first stamps the pass's clock, each
 * this process's (redo_started_at).
 */
export async function countTry(container: MedusaContainer, unsent: Unsent, now: Date): Promise<RedoTries> {
  const tries = `metadata->'${REDO_TRIES_KEY}'->>'tries'`;
  return await mergeTries(
    container,
    unsent,
    `'tries', case when ${tries} ~ '^[0-9]+$' then (${tries})::int else 0 end + 1,
     'first_tried_at', coalesce(metadata->'${REDO_TRIES_KEY}'->>'first_tried_at', ?::text),
     'redo_started_at', ?::text`,
    [now.toISOString(), new Date().toISOString()],
  );
}

/** Keeps the try's failure (shortened: a log line's worth) with the row's tries. */
export async function recordFailure(
  container: MedusaContainer,
  unsent: Unsent,
  message: string,
): Promise<RedoTries> {
  return await mergeTries(container, unsent, `'last_error', ?::text`, [message.slice(0, 500)]);
}
