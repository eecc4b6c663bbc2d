import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { formatCents } from "@purchase-auth/core";
import { toCentsRounded } from "../providers/purchase-auth/amounts";
import { knexOf } from "./lookups";

// The recorded-writes pass (recorded-writes.ts) redoes a capture or refund Medusa recorded that never
// reached the service. A redo that fails every run (the service refuses it for a reason other than
// its order's state, Medusa's own workflow rejects it, e.g. a refund whose refund reason was
// deleted, or the service stays unreachable) would be tried, and logged, for ever. Its tries are
// counted on the row set aside (`metadata.purchase_auth_redo` of the capture or refund row: Medusa
// never touches a soft-deleted row, so the count survives restarts and crashes, and the plugin adds
// no table). Once the bounds below are passed the pass gives up: the row stays set aside (Medusa
// shows what the service holds, never money it did not move), the payment is flagged for a person
// (`review_reason` in its data, shown by the admin order widget as "Needs review"), one ERROR line
// says why, and later runs no longer read the payment (GIVEN_UP_SKIPPED).
//
// To have the pass redo it again, a person clears the flag:
//   update payment set data = data - 'review_reason' where id = '<payment id>';
// the next run starts the row's tries afresh. To drop it instead (settled with the service, or
// captured or refunded again in Medusa by hand), delete the row set aside, then clear the flag:
//   delete from capture where id = '<row id>' and deleted_at is not null;   -- or refund

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
}

/** The candidate query's condition (payment `p`): not a payment given up on and still flagged. */
export const GIVEN_UP_SKIPPED = `not (coalesce(p.data->>'review_reason', '') <> ''
  and exists (select 1 from capture c where c.payment_id = p.id and c.deleted_at is not null
                and c.metadata->'${REDO_TRIES_KEY}'->>'given_up_at' is not null
              union all
              select 1 from refund r where r.payment_id = p.id and r.deleted_at is not null
                and r.metadata->'${REDO_TRIES_KEY}'->>'given_up_at' is not null))`;

interface SetAside {
  kind: "capture" | "refund";
  row: { id: string; metadata?: Record<string, unknown> | null };
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
async function mergeTries(
  container: MedusaContainer,
  unsent: SetAside,
  entries: string,
  bindings: unknown[],
): Promise<RedoTries> {
  const { rows } = await knexOf(container).raw(
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
export async function countTry(container: MedusaContainer, unsent: SetAside, now: Date): Promise<RedoTries> {
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
  unsent: SetAside,
  message: string,
): Promise<RedoTries> {
  return await mergeTries(container, unsent, `'last_error', ?::text`, [message.slice(0, 500)]);
}

/**
 * A row given up on, whose payment a person unflagged (the candidate query reads it again only
 * then): its tries start afresh, and the pass redoes it.
 */
export async function restartIfUnflagged(
  container: MedusaContainer,
  paymentId: string,
  unsent: SetAside,
): Promise<void> {
  if (!redoTriesOf(unsent.row.metadata).given_up_at) return;
  await knexOf(container).raw(
    `update ${unsent.kind} set metadata = metadata - '${REDO_TRIES_KEY}' where id = ? and deleted_at is not null`,
    [unsent.row.id],
  );
  unsent.row.metadata = { ...unsent.row.metadata };
  delete unsent.row.metadata[REDO_TRIES_KEY];
  container
    .resolve(ContainerRegistrationKeys.LOGGER)
    .info(
      `purchase-auth: payment ${paymentId} is no longer flagged: ${unsent.kind} ${unsent.row.id}, set aside, is sent again`,
    );
}

/** A row set aside behind the one given up on, waiting for its turn. */
export interface WaitingRow {
  kind: SetAside["kind"];
  id: string;
  /** Formatted, e.g. "20.00". */
  amount: string;
}

/** The rows waiting, for the review reason and the ERROR line; empty when there are none. */
function waitingText(waiting: readonly WaitingRow[]): string {
  if (waiting.length === 0) return "";
  const rows = waiting.map((row) => `${row.kind} ${row.id} of ${row.amount}`).join(", ");
  return ` Set aside behind it, and out of Medusa's figures until it is sent again or dropped: ${rows}.`;
}

/** The review reason a payment given up on gets (ids and amounts only: the data reaches storefronts). */
export function givenUpReason(
  kind: SetAside["kind"],
  rowId: string,
  amount: string,
  tries: RedoTries,
  waiting: readonly WaitingRow[] = [],
): string {
  return `Medusa recorded a ${kind} of ${amount} (${rowId}) that never reached the service, and the reconcile job gave up sending it again after ${tries.tries} tries since ${tries.first_tried_at ?? "?"}; it is set aside, so Medusa shows what the service holds.${waitingText(waiting)} See the job's ERROR line for why. To have the job send it again, clear this review_reason; to drop it, delete the set-aside ${kind} row, then clear this review_reason.`;
}

/**
 * Gives up on the row's redo after `tries` (as last recorded): flags the payment (`review_reason`;
 * added to a review already pending, which would otherwise hide this one once a person clears it,
 * but never twice), then stamps the row (a crash in between leaves a flagged payment whose row the
 * next run gives up on again, never one that looks unflagged by a person), and logs one ERROR line.
 * The row, and `waiting` behind it, stay set aside. The caller holds the payment's lock (a follow
 * writing the payment's data back would drop a flag written meanwhile). False: the redo did not
 * settle.
 */
export async function giveUp(
  container: MedusaContainer,
  paymentId: string,
  unsent: SetAside,
  rowAmount: string,
  tries: RedoTries,
  now: Date,
  waiting: readonly WaitingRow[] = [],
): Promise<false> {
  const amount = formatCents(toCentsRounded(rowAmount));
  const reason = givenUpReason(unsent.kind, unsent.row.id, amount, tries, waiting);
  await knexOf(container).raw(
    `update payment set data = coalesce(data, '{}'::jsonb) || jsonb_build_object('review_reason',
       case when coalesce(data->>'review_reason', '') = '' then ?::text
            else (data->>'review_reason') || E'\n\n' || ?::text end),
       updated_at = now()
     where id = ? and deleted_at is null and strpos(coalesce(data->>'review_reason', ''), ?::text) = 0`,
    [reason, reason, paymentId, unsent.row.id],
  );
  await mergeTries(container, unsent, `'given_up_at', ?::text`, [now.toISOString()]);
  container
    .resolve(ContainerRegistrationKeys.LOGGER)
    .error(
      `purchase-auth: payment ${paymentId} needs review: sending its ${unsent.kind} ${unsent.row.id} of ${amount} again (Medusa recorded it, the service never got it) failed ${tries.tries} times since ${tries.first_tried_at ?? "?"}, last: ${tries.last_error ?? "the try did not finish (the process stopped)"}. The job gives up: the ${unsent.kind} stays set aside (Medusa shows what the service holds), and the payment is flagged (review_reason); clear the flag to have the job send it again.${waitingText(waiting)}`,
    );
  return false;
}
