import { type AttemptSchedule, attemptScheduleSchema } from "@purchase-auth/core";
import type { OrderLine } from "./order-lines";

/**
 * Where an authorization stands, as this provider last saw it. The service's own order statuses
 * (NotActivated, Activated, ...) are read back with `orders.get` when Medusa asks.
 */
export type AuthorizationState =
  | "initiated"
  | "pending_authorization"
  | "authorized"
  | "captured"
  | "failed"
  | "canceled"
  /** The authorization request's outcome is not known (timeout, 503, lost answer): repeat it. */
  | "unknown";

/**
 * The payment data this provider keeps in Medusa (payment session, then payment). Medusa sends it to
 * the storefront, so it holds identifiers and amounts only, never a secret. Every key is always
 * written, null when unknown: Medusa merges the storefront's `data` under what a provider returns,
 * and writing each key ourselves means no storefront value survives under one of our names.
 */
export interface PurchaseAuthData {
  /** Medusa's payment session id; webhooks are mapped back to it. */
  session_id: string | null;
  /** The customer token charged, one of the customer's stored tokens. */
  customer_token: string | null;
  /** The amount to authorize in the service's form ("120.50"). */
  amount: string | null;
  /** ISO 4217, upper case. */
  currency: string | null;
  capture_mode: "Auto" | "Manual" | null;
  /** The cart's lines, set server-side just before the cart completes; null = one line. */
  order_lines: OrderLine[] | null;
  cart_id: string | null;
  authorization_id: string | null;
  order_id: string | null;
  state: AuthorizationState | null;
  captured_amount: string | null;
  refunded_amount: string | null;
  /** The service's reason when an authorization failed (e.g. TOKEN_REVOKED). */
  failure_reason: string | null;
  /**
   * With state "unknown": the attempt whose outcome is not known. Its idempotency key is derived
   * from session_id and this number, so repeating it learns the outcome instead of charging again.
   */
  authorize_attempt: number | null;
  /**
   * With state "unknown": when the unknown attempt's key was first sent (ISO 8601). The key may be
   * sent again only inside the service's idempotency window; the reconciler uses it.
   */
  authorize_first_sent_at: string | null;
  /**
   * With state "pending_authorization" (accepted, 202): when the send answered 202 left (ISO 8601).
   * The service created the authorization, and started its schedule, no later than that: at that
   * send, or at an earlier send of the same key (a repeat after an unknown outcome, up to the
   * service's hour later; the first send may never have reached it). The schedule counted from here
   * is never earlier than the service's. Null in sessions accepted before it was recorded.
   */
  authorize_sent_at: string | null;
  /**
   * The attemptSchedule sent with that attempt; null when none was sent (one attempt as soon as
   * possible), and in sessions accepted before it was recorded. With `authorize_sent_at` it tells
   * when the service plans its last attempt: the reconcile job counts its grace from there.
   */
  attempt_schedule: AttemptSchedule | null;
  /** The service's order status when last read (NotActivated, PartActivated, Cancelled, ...). */
  service_status: string | null;
  /** What the service released without capture (cancel, expiry). */
  cancelled_amount: string | null;
  /** Set when the Medusa order was canceled: a late success is then voided at the service. */
  medusa_canceled_at: string | null;
  /** Why a person must look at this payment (e.g. an outcome still unknown after the key's hour). */
  review_reason: string | null;
  /**
   * With state "unknown": when someone claimed the right to send the unknown attempt's key again
   * (ISO 8601), and who ("reconcile job" or "checkout"); see session-sql.ts. A claim older than
   * RESEND_CLAIM_TTL_MS is dead. Null otherwise.
   */
  resend_claimed_at: string | null;
  resend_claimed_by: string | null;
  /**
   * Set (ISO 8601) by the reconcile job (or deletePayment), in one guarded write, just before it
   * sends the release (cancel, refund) of the order it found for an unknown session (`order_id`).
   * While the state is still "unknown" the session is **releasing**: the answer may have been lost,
   * so nothing may authorize it; the job (or a webhook) repeats the release with the same keys until
   * it is known.
   */
  release_started_at: string | null;
  /** The base of the release's idempotency keys (releaseKey(namespace, step, base)): the session id. */
  release_key_base: string | null;
}

const STATES: ReadonlySet<string> = new Set([
  "initiated",
  "pending_authorization",
  "authorized",
  "captured",
  "failed",
  "canceled",
  "unknown",
]);

function stringOrNull(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

function orderLinesOrNull(value: unknown): OrderLine[] | null {
  if (!Array.isArray(value)) return null;
  const lines: OrderLine[] = [];
  for (const entry of value) {
    if (typeof entry !== "object" || entry === null) return null;
    const { id, description, unitPrice, quantity, vat } = entry as Record<string, unknown>;
    if (
      typeof id !== "string" ||
      typeof description !== "string" ||
      typeof unitPrice !== "string" ||
      typeof quantity !== "number" ||
      typeof vat !== "string"
    ) {
      return null;
    }
    lines.push({ id, description, unitPrice, quantity, vat });
  }
  return lines;
}

/** An attempt schedule as the service's schema reads it; null for none or anything else. */
export function scheduleOrNull(value: unknown): AttemptSchedule | null {
  if (typeof value !== "object" || value === null) return null;
  const parsed = attemptScheduleSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Reads our keys from stored payment data, ignoring anything else (e.g. storefront leftovers). */
export function readData(data: Record<string, unknown> | undefined): PurchaseAuthData {
  const source = data ?? {};
  const captureMode = source.capture_mode;
  const state = source.state;
  return {
    session_id: stringOrNull(source.session_id),
    customer_token: stringOrNull(source.customer_token),
    amount: stringOrNull(source.amount),
    currency: stringOrNull(source.currency),
    capture_mode: captureMode === "Auto" || captureMode === "Manual" ? captureMode : null,
    order_lines: orderLinesOrNull(source.order_lines),
    cart_id: stringOrNull(source.cart_id),
    authorization_id: stringOrNull(source.authorization_id),
    order_id: stringOrNull(source.order_id),
    state: typeof state === "string" && STATES.has(state) ? (state as AuthorizationState) : null,
    captured_amount: stringOrNull(source.captured_amount),
    refunded_amount: stringOrNull(source.refunded_amount),
    failure_reason: stringOrNull(source.failure_reason),
    authorize_attempt:
      typeof source.authorize_attempt === "number" && Number.isInteger(source.authorize_attempt)
        ? source.authorize_attempt
        : null,
    authorize_first_sent_at: stringOrNull(source.authorize_first_sent_at),
    authorize_sent_at: stringOrNull(source.authorize_sent_at),
    attempt_schedule: scheduleOrNull(source.attempt_schedule),
    service_status: stringOrNull(source.service_status),
    cancelled_amount: stringOrNull(source.cancelled_amount),
    medusa_canceled_at: stringOrNull(source.medusa_canceled_at),
    review_reason: stringOrNull(source.review_reason),
    resend_claimed_at: stringOrNull(source.resend_claimed_at),
    resend_claimed_by: stringOrNull(source.resend_claimed_by),
    release_started_at: stringOrNull(source.release_started_at),
    release_key_base: stringOrNull(source.release_key_base),
  };
}

/**
 * True while the reconcile job's release of the session's order may have happened at the service
 * without its answer being recorded: the session must never become authorized (see release_started_at).
 */
export function isReleasing(data: PurchaseAuthData): boolean {
  return data.state === "unknown" && data.release_started_at !== null && data.order_id !== null;
}

/** Payment data to hand back to Medusa: every key present, so it replaces the stored data wholly. */
export function writeData(data: PurchaseAuthData): Record<string, unknown> {
  return { ...data };
}

/** Moves the state forward only: a late or repeated event never undoes a later one. */
export function laterState(current: AuthorizationState | null, next: AuthorizationState): AuthorizationState {
  const rank: Record<AuthorizationState, number> = {
    initiated: 0,
    unknown: 0,
    pending_authorization: 1,
    authorized: 2,
    failed: 2,
    captured: 3,
    canceled: 4,
  };
  if (current === null) return next;
  return rank[next] >= rank[current] ? next : current;
}
