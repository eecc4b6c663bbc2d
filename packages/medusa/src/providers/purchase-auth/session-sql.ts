import { isReleasing, laterState, type PurchaseAuthData, readData } from "./session-data";

// Writes to a payment session's data that must not race. The payment module's update replaces the
// whole data with no check, so two writers (the reconcile job, a checkout, a webhook) each working
// from their own read could undo one another: a webhook's `authorized` written over the job's
// `canceled`, or the job releasing an order a checkout just authorized. These are single guarded
// statements (or a row locked for the length of one merge) on the payment module's table.

/** The PostgreSQL connection (knex) Medusa registers as `__pg_connection__`. */
export interface Knex {
  raw(sql: string, bindings: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  transaction<T>(work: (trx: Knex) => Promise<T>): Promise<T>;
}

/**
 * How long a claim to resend an unknown attempt's key holds. A resend and the release that may
 * follow take seconds (the client's timeouts bound them); a claim older than this is of a process
 * that died, and may be taken over.
 */
export const RESEND_CLAIM_TTL_MS = 10 * 60_000;

/** Who claims a resend. Only the job's claim stops a webhook: the job releases what it finds. */
export type ResendClaimant = "reconcile job" | "checkout";
export const JOB_CLAIM: ResendClaimant = "reconcile job";

/**
 * Claims the right to send the key of attempt `attempt` of session `sessionId` again, in one
 * statement: only while the session is still `unknown` on that attempt, nobody holds a live claim,
 * and Medusa has no live payment of the session (its data may read `unknown` when a checkout's
 * result was written over a success: the order Medusa recorded as paid must never be released).
 * A checkout never claims a session the job left releasing (its order may already be cancelled at
 * the service): only the job, which repeats the release, does.
 * Returns the session's data as claimed (to compare the caller's later write against), or undefined
 * when the session moved on or someone else resends it now: then the caller must not send.
 */
export async function claimResend(
  knex: Knex,
  sessionId: string,
  attempt: number,
  by: ResendClaimant,
  at = new Date(),
): Promise<Record<string, unknown> | undefined> {
  const { rows } = await knex.raw(
    `update payment_session
     set data = data || jsonb_build_object('resend_claimed_at', ?::text, 'resend_claimed_by', ?::text),
         updated_at = now()
     where id = ? and deleted_at is null and data->>'state' = 'unknown'
       and coalesce(data->>'authorize_attempt', '1') = ?
       and (data->>'resend_claimed_at' is null or (data->>'resend_claimed_at')::timestamptz <= ?::timestamptz)
       and (?::text = ?::text or data->>'release_started_at' is null)
       and not exists (select 1 from payment p where p.payment_session_id = payment_session.id and p.deleted_at is null)
     returning data`,
    [
      at.toISOString(),
      by,
      sessionId,
      String(attempt),
      new Date(at.getTime() - RESEND_CLAIM_TTL_MS).toISOString(),
      by,
      JOB_CLAIM,
    ],
  );
  return rows[0]?.data as Record<string, unknown> | undefined;
}

/** A claim as written: its time and claimant identify it (a claim is taken over only once stale). */
export interface ResendClaim {
  at: string;
  by: ResendClaimant;
}

/**
 * After a checkout's resend, with the row locked: the stored data, and whether the checkout's claim
 * is still the one on the session. A checkout stalled past RESEND_CLAIM_TTL_MS may have had its claim
 * taken over by the job, which may have released (cancelled) the very order the replayed 200 names.
 * While the claim still holds it is renewed, so it cannot go stale before Medusa writes the result
 * (which clears it). Undefined when the session is gone.
 */
export async function confirmClaimLocked(
  knex: Knex,
  sessionId: string,
  claim: ResendClaim,
  at = new Date(),
): Promise<{ data: PurchaseAuthData; held: boolean } | undefined> {
  return await knex.transaction(async (trx) => {
    const { rows } = await trx.raw(
      "select data from payment_session where id = ? and deleted_at is null for update",
      [sessionId],
    );
    const row = rows[0] as { data: Record<string, unknown> | null } | undefined;
    if (!row) return undefined;
    const data = readData(row.data ?? undefined);
    const held =
      data.state === "unknown" &&
      !isReleasing(data) &&
      data.resend_claimed_at === claim.at &&
      data.resend_claimed_by === claim.by;
    if (held) {
      await trx.raw(
        `update payment_session set data = data || jsonb_build_object('resend_claimed_at', ?::text) where id = ?`,
        [at.toISOString(), sessionId],
      );
    }
    return { data, held };
  });
}

/**
 * Gives back `claim` (one statement), only while it is still the claim on session `sessionId`, and
 * writes `alongside` with it (a checkout's declined attempt): whatever else was written to the data
 * stays, and a claim someone took over is left alone, with nothing written. True when given back.
 */
export async function releaseClaim(
  knex: Knex,
  sessionId: string,
  claim: ResendClaim,
  alongside: Partial<PurchaseAuthData> = {},
): Promise<boolean> {
  const { rows } = await knex.raw(
    `update payment_session
     set data = data || ?::jsonb || jsonb_build_object('resend_claimed_at', null, 'resend_claimed_by', null),
         updated_at = now()
     where id = ? and deleted_at is null
       and data->>'resend_claimed_at' = ? and data->>'resend_claimed_by' = ?
     returning id`,
    [JSON.stringify(alongside), sessionId, claim.at, claim.by],
  );
  return rows.length > 0;
}

/** Session `sessionId` as stored now, deleted ones included: undefined when there is no such row. */
export async function sessionRowAnyState(
  knex: Knex,
  sessionId: string,
): Promise<{ deleted: boolean; data: PurchaseAuthData } | undefined> {
  const { rows } = await knex.raw("select data, deleted_at from payment_session where id = ?", [sessionId]);
  const row = rows[0] as { data: Record<string, unknown> | null; deleted_at: unknown } | undefined;
  if (!row) return undefined;
  return { deleted: row.deleted_at !== null, data: readData(row.data ?? undefined) };
}

/** True while `data` carries the reconcile job's live claim: the job will release what it finds. */
export function heldByJob(data: PurchaseAuthData, now = new Date()): boolean {
  return (
    data.state === "unknown" &&
    data.resend_claimed_by === JOB_CLAIM &&
    data.resend_claimed_at !== null &&
    Date.parse(data.resend_claimed_at) > now.getTime() - RESEND_CLAIM_TTL_MS
  );
}

/** Thrown by a merge that meets the job's live claim: try again once the job has written. */
export class ResendClaimedError extends Error {}

/**
 * Merges `update` into session `sessionId`'s data with the row locked, so nothing is written between
 * the read and the write: the state only moves forward (a late `authorized` never undoes a
 * `canceled`), an order id is never forgotten. Returns the data written, or undefined when there is
 * no such live session of this provider. A state change for a session the reconcile job is resending
 * throws ResendClaimedError (nothing written): the job releases what it finds, so an authorization
 * recorded now would be undone at the service. A session left releasing by the job keeps its state
 * (only `canceled` moves it): its order may be cancelled at the service already.
 */
export async function mergeLocked(
  knex: Knex,
  sessionId: string,
  isOurs: (providerId: string) => boolean,
  update: Partial<PurchaseAuthData>,
): Promise<PurchaseAuthData | undefined> {
  return await knex.transaction(async (trx) => {
    const { rows } = await trx.raw(
      "select provider_id, data from payment_session where id = ? and deleted_at is null for update",
      [sessionId],
    );
    const row = rows[0] as { provider_id: string; data: Record<string, unknown> | null } | undefined;
    if (!row || !isOurs(row.provider_id)) return undefined;
    const current = readData(row.data ?? undefined);
    if (update.state && update.state !== current.state && heldByJob(current)) {
      throw new ResendClaimedError(
        `purchase-auth: payment session ${sessionId} is being resolved by the reconcile job right now; its outcome is written when the job is done, try again then`,
      );
    }
    const blocked = isReleasing(current) && update.state !== "canceled";
    const merged: PurchaseAuthData = {
      ...current,
      ...update,
      state: update.state && !blocked ? laterState(current.state, update.state) : current.state,
      order_id: current.order_id ?? update.order_id ?? null,
    };
    await trx.raw("update payment_session set data = ?::jsonb, updated_at = now() where id = ?", [
      JSON.stringify({ ...(row.data ?? {}), ...merged }),
      sessionId,
    ]);
    return merged;
  });
}

/**
 * True when the payment collection of session `sessionId` was paid another way (say, after the
 * session was flagged OUTCOME_OVERDUE), so that a late success of this session would be a second
 * payment: the collection holds a payment of another session that still holds money, and this
 * session has no live payment of its own (if it has, the success is that payment's).
 * A payment holds money, in Medusa's records, while it is neither canceled nor deleted and either
 * part of it is still only authorized (not fully captured: no capture yet, or a partial one) or
 * more was captured than refunded. A payment refunded in full is not canceled: Medusa's
 * compensation of a failed cart completion with Auto capture refunds the payment and recreates a
 * session, and that payment must not have the shopper's next payment released.
 */
export async function paidOtherwise(knex: Knex, sessionId: string): Promise<boolean> {
  const { rows } = await knex.raw(
    `select p.id from payment p
     join payment_session s on s.payment_collection_id = p.payment_collection_id
     cross join lateral (select coalesce(sum(c.amount), 0) as captured from capture c
                         where c.payment_id = p.id and c.deleted_at is null) captures
     cross join lateral (select coalesce(sum(r.amount), 0) as refunded from refund r
                         where r.payment_id = p.id and r.deleted_at is null) refunds
     where s.id = ? and p.payment_session_id is distinct from s.id
       and p.canceled_at is null and p.deleted_at is null
       and ((p.captured_at is null and p.amount > captures.captured) or captures.captured > refunds.refunded)
       and not exists (select 1 from payment own where own.payment_session_id = s.id
                       and own.canceled_at is null and own.deleted_at is null)
     limit 1`,
    [sessionId],
  );
  return rows.length > 0;
}

/**
 * Marks session `sessionId` as belonging to a canceled Medusa order (`medusa_canceled_at` merged into
 * its data, in one statement): nothing else is written, so whatever a webhook merged meanwhile (a
 * success: state authorized, its order id) stays. True when marked now.
 */
export async function markSessionOrderCanceled(
  knex: Knex,
  sessionId: string,
  at = new Date(),
): Promise<boolean> {
  const { rows } = await knex.raw(
    `update payment_session
     set data = data || jsonb_build_object('medusa_canceled_at', ?::text), updated_at = now()
     where id = ? and deleted_at is null and data->>'medusa_canceled_at' is null
     returning id`,
    [at.toISOString(), sessionId],
  );
  return rows.length > 0;
}

/**
 * The live payment (not canceled, not deleted) Medusa recorded for session `sessionId`, if any, with
 * the service's order id its data names. One session has at most one live payment (the payment
 * module's unique index).
 */
export async function livePaymentOfSession(
  knex: Knex,
  sessionId: string,
): Promise<{ id: string; orderId: string | null } | undefined> {
  const { rows } = await knex.raw(
    `select id, data->>'order_id' as order_id from payment
     where payment_session_id = ? and canceled_at is null and deleted_at is null
     limit 1`,
    [sessionId],
  );
  const row = rows[0] as { id: string; order_id: string | null } | undefined;
  return row ? { id: row.id, orderId: row.order_id } : undefined;
}

/**
 * True when nothing in Medusa holds the service's order `orderId` of authorization
 * `authorizationId`, sent for session `sessionId`: that session is gone (Medusa deletes a session
 * it replaces, a pending (202) one included), no live session or payment records the authorization
 * or its order, and no live payment was made from the session. Its success then is money nobody
 * will capture or give back: release it.
 */
export async function heldByNobody(
  knex: Knex,
  sessionId: string,
  authorizationId: string,
  orderId: string,
): Promise<boolean> {
  const { rows } = await knex.raw(
    `select
       exists (select 1 from payment_session where id = ? and deleted_at is null) as session_live,
       exists (select 1 from payment_session where deleted_at is null
               and (data->>'authorization_id' = ? or data->>'order_id' = ?)) as held_by_session,
       exists (select 1 from payment where deleted_at is null
               and (payment_session_id = ? or data->>'authorization_id' = ? or data->>'order_id' = ?)) as held_by_payment`,
    [sessionId, authorizationId, orderId, sessionId, authorizationId, orderId],
  );
  const row = rows[0] as { session_live: boolean; held_by_session: boolean; held_by_payment: boolean };
  return !row.session_live && !row.held_by_session && !row.held_by_payment;
}

/**
 * Replaces the data of payment session `sessionId` with `data`, in one statement, only while its
 * stored data still equals `read` (what the caller read before its network call) and it is not
 * deleted. True when written; false when anything changed it meanwhile (then nothing is written, and
 * the caller reads it again later). `updated_at` becomes now, as with the module's update.
 * With `unclaimedAt` it also requires that nobody holds a live resend claim at that time (none, or
 * one older than RESEND_CLAIM_TTL_MS): for a writer that holds no claim of its own (deletePayment),
 * even when `read` already carried the claim.
 */
export async function replaceSessionDataIfUnchanged(
  knex: Knex,
  sessionId: string,
  read: Record<string, unknown> | null,
  data: Record<string, unknown>,
  unclaimedAt?: Date,
): Promise<boolean> {
  const staleBefore = unclaimedAt
    ? new Date(unclaimedAt.getTime() - RESEND_CLAIM_TTL_MS).toISOString()
    : null;
  const { rows } = await knex.raw(
    `update payment_session set data = ?::jsonb, updated_at = now()
     where id = ? and deleted_at is null and data is not distinct from ?::jsonb
       and (?::timestamptz is null or data->>'resend_claimed_at' is null
            or (data->>'resend_claimed_at')::timestamptz <= ?::timestamptz)
     returning id`,
    [JSON.stringify(data), sessionId, read === null ? null : JSON.stringify(read), staleBefore, staleBefore],
  );
  return rows.length > 0;
}

/**
 * The stored data of session `sessionId` when it is a checkout's session no cart can complete on:
 * Medusa's status `error` (an unknown outcome; Medusa completes a cart only on a pending, authorized
 * or captured session), no payment recorded for it, its payment collection an open cart's (not
 * completed) and no order's. Undefined otherwise. A late success for such a session is money
 * nothing in Medusa would ever capture. A completed cart's collection stays linked to the cart and
 * is linked to its order: a session there (the charge workflow's, paying a placed order) is the
 * order's, and its success is recorded on the order, never released.
 */
export async function strandedCheckoutData(
  knex: Knex,
  sessionId: string,
): Promise<Record<string, unknown> | undefined> {
  const { rows } = await knex.raw(
    `select s.data, s.payment_collection_id from payment_session s
     where s.id = ? and s.deleted_at is null and s.status = 'error'
       and not exists (select 1 from payment p where p.payment_session_id = s.id and p.deleted_at is null)`,
    [sessionId],
  );
  const row = rows[0] as { data: Record<string, unknown> | null; payment_collection_id: string } | undefined;
  if (!row) return undefined;
  // The link tables exist wherever carts and orders do (not with the payment module alone).
  const { rows: tables } = await knex.raw(
    `select to_regclass('cart_payment_collection') is not null and to_regclass('order_payment_collection') is not null as linked`,
    [],
  );
  if (!(tables[0] as { linked: boolean } | undefined)?.linked) return undefined;
  const { rows: open } = await knex.raw(
    `select 1 from cart_payment_collection cpc join cart c on c.id = cpc.cart_id
     where cpc.payment_collection_id = ? and cpc.deleted_at is null
       and c.deleted_at is null and c.completed_at is null
       and not exists (select 1 from order_payment_collection opc
                       where opc.payment_collection_id = cpc.payment_collection_id and opc.deleted_at is null)
     limit 1`,
    [row.payment_collection_id],
  );
  return open.length > 0 ? (row.data ?? {}) : undefined;
}
