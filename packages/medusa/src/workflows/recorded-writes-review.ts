import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { formatCents } from "@purchase-auth/core";
import { toCentsRounded } from "../providers/purchase-auth/amounts";
import { knexOf } from "./lookups";
import { withPaymentLock } from "./payment-lock";
import { mergeTries, REDO_TRIES_KEY, type RedoTries, redoTriesOf } from "./recorded-writes-given-up";
import { amountOf, setAsideRows, type Unsent } from "./set-aside";

// A redo tried out (recorded-writes-given-up.ts) is given up: the row stays set aside (Medusa does
// not count it), and a person is asked. Three marks, written in one transaction:
// - the row's `given_up_at` (in its redo record), which stops the pass from redoing it;
// - the payment's `review_reason` (its data), which the admin order widget shows as "Needs review";
// - the payment's metadata key GIVEN_UP_KEY, naming the row: the question is still open.
// Medusa writes a payment's data back after each capture, refund or cancel, as it read it before
// the provider's call: a flag written meanwhile is lost. Medusa never writes a payment's metadata,
// so the pass tells a lost flag (metadata still names the row: written again) from a person's
// answer (both removed: the row's tries start afresh). A person answers with
//   update payment set data = data - 'review_reason', metadata = metadata - 'purchase_auth_given_up'
//   where id = '<payment id>';
// to have the job send the row again, after deleting the set-aside row to drop it instead
// (settled with the service, or captured or refunded again in Medusa by hand):
//   delete from capture where id = '<row id>' and deleted_at is not null;   -- or refund
// Later runs do not read a payment whose flag names its given-up row (GIVEN_UP_SKIPPED).

/** The payment metadata key naming the row given up on while a person has not answered. */
export const GIVEN_UP_KEY = "purchase_auth_given_up";

/** How the flag names a row: the one given up on, never a row waiting behind it. */
const named = (rowId: string) => `(${rowId})`;

/** The rows set aside and given up on, of every payment: kind, id, payment_id. */
const GIVEN_UP_ROWS = `(select 'capture' as kind, c.id, c.payment_id from capture c
    where c.deleted_at is not null and c.metadata->'${REDO_TRIES_KEY}'->>'given_up_at' is not null
  union all
  select 'refund', r.id, r.payment_id from refund r
    where r.deleted_at is not null and r.metadata->'${REDO_TRIES_KEY}'->>'given_up_at' is not null)`;

/** Whether payment `p`'s review_reason names the given-up row `g` (as the flag names it). */
const FLAG_NAMES_ROW = `strpos(coalesce(p.data->>'review_reason', ''), '(' || g.id || ')') > 0`;

/** The candidate query's condition (payment `p`): not a payment whose flag names its given-up row. */
export const GIVEN_UP_SKIPPED = `not exists (select 1 from ${GIVEN_UP_ROWS} g
  where g.payment_id = p.id and ${FLAG_NAMES_ROW})`;

/** A row set aside behind the one given up on, waiting for its turn. */
interface WaitingRow {
  kind: Unsent["kind"];
  id: string;
  /** Formatted, e.g. "20.00". */
  amount: string;
}

/** The rows waiting, for the review reason and the log lines; empty when there are none. */
function waitingText(waiting: readonly WaitingRow[]): string {
  if (waiting.length === 0) return "";
  const rows = waiting.map((row) => `${row.kind} ${row.id} of ${row.amount}`).join(", ");
  return ` Set aside behind it, and not counted by Medusa until it is sent again or dropped: ${rows}.`;
}

/** Why the pass gave up: tried out, or plugin rows that may be the row's own try (`lookalikes`). */
export interface GiveUpCause {
  tries: RedoTries;
  lookalikes?: readonly string[];
}

/** What happened, in the review reason's words. */
function causeText(unsent: Unsent, amount: string, { tries, lookalikes = [] }: GiveUpCause): string {
  if (lookalikes.length === 0)
    return `the reconcile job tried to send it again ${tries.tries} times since ${tries.first_tried_at ?? "?"} and gave up.`;
  return `a try to send it again may have reached the service with its answer lost, and the plugin has since recorded ${unsent.kind} ${lookalikes.join(", ")} of ${amount} from the service's figures: one may be this one, or they are others of the same amount. The reconcile job does not decide: if one is this one, drop this ${unsent.kind}; if not, have the job send it.`;
}

/** The review reason of a payment given up on (ids and amounts only: the data reaches storefronts). */
export function givenUpReason(
  unsent: Unsent,
  cause: GiveUpCause,
  waiting: readonly WaitingRow[] = [],
): string {
  const { kind, row } = unsent;
  const amount = formatCents(toCentsRounded(amountOf(row)));
  return `Medusa recorded a ${kind} of ${amount} ${named(row.id)} that a crash kept from the service; ${causeText(unsent, amount, cause)} It is set aside: Medusa does not count it.${waitingText(waiting)} See the job's ERROR line for why. To have the job send it again, remove this review_reason and the payment's metadata key ${GIVEN_UP_KEY}; to drop it, first delete the set-aside ${kind} row.`;
}

/** The rows set aside behind `unsent`, as the flag names them. */
async function waitingBehind(container: MedusaContainer, paymentId: string, unsent: Unsent) {
  return (await setAsideRows(container, paymentId))
    .filter((other) => other.row.id !== unsent.row.id)
    .map((other) => ({
      kind: other.kind,
      id: other.row.id,
      amount: formatCents(toCentsRounded(amountOf(other.row))),
    }));
}

/**
 * Writes the payment's flag (added to a review already pending, which would otherwise hide it once
 * a person clears that one; never twice) and the metadata key naming the row, in one statement.
 */
async function flag(
  db: ReturnType<typeof knexOf>,
  paymentId: string,
  unsent: Unsent,
  reason: string,
): Promise<void> {
  await db.raw(
    `update payment set
       data = case when strpos(coalesce(data->>'review_reason', ''), ?::text) > 0 then data
         else coalesce(data, '{}'::jsonb) || jsonb_build_object('review_reason',
           case when coalesce(data->>'review_reason', '') = '' then ?::text
                else (data->>'review_reason') || E'\\n\\n' || ?::text end) end,
       metadata = coalesce(metadata, '{}'::jsonb)
         || jsonb_build_object('${GIVEN_UP_KEY}', jsonb_build_object('kind', ?::text, 'row_id', ?::text)),
       updated_at = now()
     where id = ? and deleted_at is null`,
    [named(unsent.row.id), reason, reason, unsent.kind, unsent.row.id, paymentId],
  );
}

/**
 * Gives up on the row's redo (`cause`: tried out, or lookalikes a person must tell apart): the
 * row's stamp, the payment's flag and its metadata key in one transaction (a crash leaves all or
 * none), under the payment's lock (a follow writing the payment's data back would drop a flag
 * written meanwhile); then one ERROR line. The row, and the rows waiting behind it, stay set
 * aside. False: the redo did not settle.
 */
export async function giveUpOn(
  container: MedusaContainer,
  paymentId: string,
  unsent: Unsent,
  cause: GiveUpCause,
  now: Date,
): Promise<false> {
  const waiting = await withPaymentLock(container, paymentId, async () => {
    const waiting = await waitingBehind(container, paymentId, unsent);
    await knexOf(container).transaction(async (trx) => {
      await mergeTries(
        container,
        unsent,
        `'given_up_at', ?::text, 'asked_about', ?::jsonb`,
        [now.toISOString(), JSON.stringify(cause.lookalikes ?? [])],
        trx,
      );
      await flag(trx, paymentId, unsent, givenUpReason(unsent, cause, waiting));
    });
    return waiting;
  });
  const amount = formatCents(toCentsRounded(amountOf(unsent.row)));
  const { tries, lookalikes = [] } = cause;
  const why =
    lookalikes.length === 0
      ? `failed ${tries.tries} times since ${tries.first_tried_at ?? "?"}, last: ${tries.last_error ?? "the try did not finish (the process stopped)"}`
      : `may have been done by a try whose answer was lost: the plugin has since recorded ${unsent.kind} ${lookalikes.join(", ")} of the same amount from the service's figures, which may be it or others`;
  container
    .resolve(ContainerRegistrationKeys.LOGGER)
    .error(
      `purchase-auth: payment ${paymentId} needs review: sending its ${unsent.kind} ${unsent.row.id} of ${amount} again (Medusa recorded it, a crash kept it from the service) ${why}. The job gives up: the ${unsent.kind} stays set aside (Medusa does not count it), and the payment is flagged (review_reason, metadata ${GIVEN_UP_KEY}); remove both to have the job send it again, or delete the set-aside row first to drop it.${waitingText(waiting)}`,
    );
  return false;
}

/**
 * A row given up on whose payment the pass reads again (its flag does not name the row): true when
 * a person answered (the metadata key is gone too), and its tries start afresh; false when the flag
 * was lost (Medusa wrote the payment's data back, or a person removed only the flag), and it is
 * written again. A row not given up on: true. Runs under the payment's lock.
 */
export async function answeredOrFlaggedAgain(
  container: MedusaContainer,
  paymentId: string,
  unsent: Unsent,
): Promise<boolean> {
  const tries = redoTriesOf(unsent.row.metadata);
  if (!tries.given_up_at) return true;
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const { rows } = await knexOf(container).raw(
    "select data->>'review_reason' as reason, metadata->? as mark from payment where id = ?",
    [GIVEN_UP_KEY, paymentId],
  );
  const { reason, mark } = (rows[0] ?? {}) as { reason?: string | null; mark?: { row_id?: string } | null };
  if (reason?.includes(named(unsent.row.id))) return false;
  if (mark?.row_id === unsent.row.id) {
    const cause = { tries, lookalikes: tries.asked_about };
    const waiting = await waitingBehind(container, paymentId, unsent);
    await flag(knexOf(container), paymentId, unsent, givenUpReason(unsent, cause, waiting));
    logger.warn(
      `purchase-auth: payment ${paymentId} had lost its review_reason about ${unsent.kind} ${unsent.row.id}, given up on (Medusa writes a payment's data back after a capture, refund or cancel); it is written again. To have the job send it again, remove the review_reason and the payment's metadata key ${GIVEN_UP_KEY}.`,
    );
    return false;
  }
  // Its tries start afresh; when its last try began, and what a person was asked about, stay: a
  // plugin row of its amount recorded since, not asked about yet, is asked about first.
  const { rows: reset } = await knexOf(container).raw(
    `update ${unsent.kind} set metadata = jsonb_set(metadata, '{${REDO_TRIES_KEY}}',
       (metadata->'${REDO_TRIES_KEY}') - 'tries' - 'first_tried_at' - 'given_up_at' - 'last_error')
     where id = ? and deleted_at is not null returning metadata`,
    [unsent.row.id],
  );
  unsent.row.metadata = (reset[0] as { metadata?: Record<string, unknown> } | undefined)?.metadata ?? {};
  logger.info(
    `purchase-auth: payment ${paymentId} is no longer flagged: ${unsent.kind} ${unsent.row.id}, set aside, is sent again`,
  );
  return true;
}

/**
 * Payments given up on by a version before the metadata key: their flag names the row, the key is
 * missing, and a flag Medusa then erased would look answered. The key is written for them (one
 * statement a run; a handful of rows at most).
 */
export async function markEarlierGiveUps(container: MedusaContainer): Promise<void> {
  await knexOf(container).raw(
    `update payment p set metadata = coalesce(p.metadata, '{}'::jsonb)
       || jsonb_build_object('${GIVEN_UP_KEY}', jsonb_build_object('kind', g.kind, 'row_id', g.id))
     from ${GIVEN_UP_ROWS} g
     where p.id = g.payment_id and p.deleted_at is null and ${FLAG_NAMES_ROW}
       and p.metadata->'${GIVEN_UP_KEY}' is null`,
    [],
  );
}
