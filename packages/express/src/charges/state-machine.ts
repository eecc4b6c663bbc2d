import type { OrderStatus } from "@purchase-auth/core";
import type { ChargeRecord, ChargeStatus } from "../stores/types.js";
import { type CreateSendNews, recordCreateSend, sameSendCounts } from "./create-sends.js";
import { isoString } from "./iso-time.js";
import { type OperationNews, operationId, recordOperation, sameOperationLog } from "./operation-log.js";

export { operationId };

// The forward-only life of a charge. Webhooks arrive twice and out of order (supplement C), answers
// and webhooks race each other, and two app instances write at once; so every change is expressed as
// "what we learnt", and `advance` applies it only when it moves the charge forward. Applying the same
// news twice, or old news late, changes nothing.

/** Where an open outcome (pending, or given up to review) may go once the service's truth arrives. */
const OUTCOMES: ReadonlyArray<ChargeStatus> = [
  "authorized",
  "partially_captured",
  "captured",
  "partially_refunded",
  "refunded",
  "cancelled",
  "expired",
  "failed",
];

/** Where each status may go next. A status absent from a list is behind it, or on another branch. */
const FORWARD: Readonly<Record<ChargeStatus, ReadonlyArray<ChargeStatus>>> = {
  pending: ["needs_review", ...OUTCOMES],
  authorized: ["partially_captured", "captured", "partially_refunded", "refunded", "cancelled", "expired"],
  // A part-captured order that is cancelled or expires keeps what was captured: it ends as captured.
  partially_captured: ["captured", "partially_refunded", "refunded"],
  captured: ["partially_refunded", "refunded"],
  partially_refunded: ["refunded"],
  refunded: [],
  cancelled: [],
  expired: [],
  failed: [],
  // The service's truth still counts when it arrives late (a webhook): review ends there.
  needs_review: OUTCOMES,
};

export const CHARGE_STATUSES = Object.keys(FORWARD) as ChargeStatus[];

/** True when `to` is ahead of `from` (a status is not ahead of itself). */
export function canMove(from: ChargeStatus, to: ChargeStatus): boolean {
  return FORWARD[from].includes(to);
}

/** The statuses a charge may be in for a store to accept `to` within the same attempt. */
export function statusesAllowedBefore(to: ChargeStatus): ChargeStatus[] {
  return CHARGE_STATUSES.filter((from) => from === to || canMove(from, to));
}

/**
 * The rule stores enforce on compare-and-set: a new attempt (after a definite failure) starts over;
 * within an attempt the status stays or moves forward.
 */
export function isForwardMove(current: ChargeRecord, next: ChargeRecord): boolean {
  if (next.attempt !== current.attempt) return next.attempt > current.attempt;
  return next.status === current.status || canMove(current.status, next.status);
}

/**
 * Nothing is outstanding on a charge in this status: it failed, or its order was captured in full,
 * refunded, cancelled or expired. At most a refund can still follow. The other statuses are open
 * (pending, authorized, partially_captured): an outcome or a capture is still to come, because they
 * are the statuses from which a charge can still move to "captured".
 */
export function isSettled(status: ChargeStatus): boolean {
  return !canMove(status, "captured");
}

/**
 * The shopper can stop waiting: the charge failed, or reached what checkout asked for (the capture
 * with auto capture, the authorization with manual capture), or anything after it.
 */
export function isCheckoutComplete(charge: Pick<ChargeRecord, "status" | "captureMode">): boolean {
  if (charge.status === "pending") return false;
  return charge.status !== "authorized" || charge.captureMode === "Manual";
}

/** The service's order status, as a charge status (supplement A). */
export function chargeStatusOfOrder(status: OrderStatus): ChargeStatus {
  switch (status) {
    case "NotActivated":
      return "authorized";
    case "PartActivated":
      return "partially_captured";
    case "Activated":
      return "captured";
    case "PartReturned":
      return "partially_refunded";
    case "Returned":
      return "refunded";
    case "Cancelled":
      return "cancelled";
    case "Expired":
      return "expired";
  }
}

/**
 * What we learnt about a charge, from an answer of the service or a webhook. News from the answer to
 * a create call carries the `attempt` it was sent for: it never applies to another attempt.
 */
export type ChargeNews =
  /** 202: accepted; the outcome comes later. */
  | { kind: "accepted"; authorizationId: string; attempt?: number }
  /**
   * 200 or `authorization.succeeded`: an order exists; with auto capture a 200 also means captured.
   * `authorized`: what the service says it authorized (a webhook's data), to tell another order's
   * authorization matched by reference from the charge's own.
   */
  | {
      kind: "authorized";
      authorizationId: string;
      orderId: string;
      captured: boolean;
      attempt?: number;
      authorized?: AuthorizedOrder;
    }
  /** `authorization.retrying`: still pending; remember why the last attempt failed. */
  | { kind: "retrying"; authorizationId: string; reason: string }
  /** 422 or `authorization.failed`. */
  | { kind: "failed"; authorizationId?: string; reason: string; attempt?: number }
  /** An order event or a fresh read of the order. */
  | { kind: "order"; authorizationId: string; orderId: string; orderStatus: OrderStatus }
  /** A merchant write recorded before a send, or how a send ended (operation-log.ts). */
  | OperationNews
  /** A resend of the attempt's create call counted before it goes out, or a send that did nothing (create-sends.ts). */
  | CreateSendNews
  /** The create call's outcome stayed unknown past the idempotency window. */
  | { kind: "needs_review"; reason: string };

/** What an `authorization.succeeded` says was authorized. */
export interface AuthorizedOrder {
  customerToken: string;
  currency: string;
  captureMode: string;
}

/**
 * True when news of an authorization the charge does not hold yet is certainly of another order:
 * another customer token than the attempt's create call, another currency or capture mode. Only a
 * certain difference counts: taken for another order's, the charge's own authorization would never
 * be applied to it. So the amount is not compared (the service totals the items itself, and a
 * rounding of its own must not disown the charge's authorization), nor a token the record lacks.
 */
function authorizesAnotherOrder(charge: ChargeRecord, news: ChargeNews): boolean {
  if (news.kind !== "authorized" || news.authorized === undefined) return false;
  const { authorized } = news;
  const token = charge.pendingAuthorization?.request.customerToken;
  if (token !== undefined && token.toLowerCase() !== authorized.customerToken.toLowerCase()) return true;
  if (charge.currency.toUpperCase() !== authorized.currency.toUpperCase()) return true;
  return charge.captureMode !== authorized.captureMode;
}

/**
 * True when `news` is about an authorization the charge does not hold: another id than the one its
 * attempt holds, or, while it holds none yet (matched by reference), certainly another order's.
 */
export function isAnotherAuthorization(charge: ChargeRecord, news: ChargeNews): boolean {
  const id = "authorizationId" in news ? news.authorizationId : undefined;
  if (id === undefined) return false;
  const held = charge.authorizationId;
  return held === undefined ? authorizesAnotherOrder(charge, news) : held.toLowerCase() !== id.toLowerCase();
}

/**
 * A copy of a charge, its `operations` too. Field by field, because V8 is slow to spread a frozen
 * record (the memory store's) and to freeze the result of a spread: about a microsecond each, ten
 * times this. (The store contract test "keeps every field" fails to compile when ChargeRecord gains
 * a field, and then checks that it is copied here.)
 */
export function copyCharge(charge: ChargeRecord, keepAttemptDetails = true): ChargeRecord {
  const { capture, cancel, refund } = charge.operations;
  const copy: ChargeRecord = {
    reference: charge.reference,
    customerId: charge.customerId,
    attempt: charge.attempt,
    status: charge.status,
    amount: charge.amount,
    currency: charge.currency,
    captureMode: charge.captureMode,
    operations: { capture, cancel, refund },
    version: charge.version,
    createdAt: charge.createdAt,
    updatedAt: charge.updatedAt,
  };
  if (charge.authorizationId !== undefined) copy.authorizationId = charge.authorizationId;
  if (charge.previousAuthorizationIds !== undefined) {
    copy.previousAuthorizationIds = [...charge.previousAuthorizationIds];
  }
  if (charge.orderFingerprint !== undefined) copy.orderFingerprint = charge.orderFingerprint;
  if (charge.orderId !== undefined) copy.orderId = charge.orderId;
  if (keepAttemptDetails) {
    if (charge.reason !== undefined) copy.reason = charge.reason;
    // Never changed in place once stored: shared, not copied.
    if (charge.pendingAuthorization !== undefined) copy.pendingAuthorization = charge.pendingAuthorization;
  }
  if (charge.operationLog !== undefined) copy.operationLog = { ...charge.operationLog };
  return copy;
}

/**
 * The charge after `news`, or undefined when the news changes nothing (old, repeated, or about
 * another attempt's authorization).
 */
export function advance(charge: ChargeRecord, news: ChargeNews, now: Date): ChargeRecord | undefined {
  if (isAboutAnotherAttempt(charge, news)) return undefined;
  const authorizationId = "authorizationId" in news ? news.authorizationId : undefined;
  if (authorizationId !== undefined && isAnotherAuthorization(charge, news)) {
    return notThisCharges(charge, authorizationId, now);
  }
  let next = copyCharge(charge);
  if (authorizationId !== undefined && next.authorizationId === undefined) {
    next.authorizationId = authorizationId.toLowerCase();
  }
  switch (news.kind) {
    case "accepted":
      break;
    case "authorized":
      next.orderId ??= news.orderId;
      moveTo(next, news.captured ? "captured" : "authorized");
      break;
    case "retrying":
      if (next.status === "pending") next.reason = news.reason;
      break;
    case "failed":
      if (next.status === "pending" || next.status === "needs_review") {
        next.status = "failed";
        next.reason = news.reason;
      }
      break;
    case "order":
      next.orderId ??= news.orderId;
      moveTo(next, chargeStatusOfOrder(news.orderStatus));
      break;
    case "operation":
      recordOperation(next, news);
      break;
    case "create_sending":
    case "create_not_delivered":
      recordCreateSend(next, news);
      break;
    case "needs_review":
      if (next.status === "pending") {
        next.status = "needs_review";
        next.reason = news.reason;
      }
      break;
  }
  // Once the authorization succeeded, a retry reason means nothing, nor does the create call: it
  // is never sent again, and kept it was most of what a settled charge holds (the memory store
  // keeps tens of thousands). Copied without them rather than `delete`d: a deleted field turns the
  // record into a slow dictionary object for V8, and every later read of it pays.
  if (
    !NOT_AUTHORIZED.includes(next.status) &&
    (next.reason !== undefined || next.pendingAuthorization !== undefined)
  ) {
    next = copyCharge(next, false);
  }

  if (sameCharge(charge, next)) return undefined;
  next.version = charge.version + 1;
  next.updatedAt = isoString(now.getTime());
  return next;
}

/**
 * News of an authorization other than the one the charge's attempt holds: never this attempt's (it
 * has its own) nor a later one's (a new attempt is stored before it is sent, so its authorization
 * cannot exist while the charge still shows this one). Remembered with the earlier attempts' ids,
 * so that it can never be taken for the authorization of a later attempt, however late it comes.
 */
function notThisCharges(charge: ChargeRecord, authorizationId: string, now: Date): ChargeRecord {
  const next = copyCharge(charge);
  next.previousAuthorizationIds = [...(charge.previousAuthorizationIds ?? []), authorizationId.toLowerCase()];
  next.version = charge.version + 1;
  next.updatedAt = isoString(now.getTime());
  return next;
}

/**
 * The statuses in which the attempt's authorization has not succeeded: its `reason` still means
 * something (why it failed, or why it is retrying), and so may its create call (still to be resent,
 * to look up by hand under review, or what was refused).
 */
const NOT_AUTHORIZED: ReadonlyArray<ChargeStatus> = ["pending", "failed", "needs_review"];

/** Moves the charge to `status` if that is forward. (A function, not a closure per news.) */
function moveTo(next: ChargeRecord, status: ChargeStatus): void {
  if (canMove(next.status, status)) next.status = status;
}

/**
 * True when `news` is about an earlier (or another) attempt than the charge's current one: create
 * call news sent for another attempt, or news naming an earlier attempt's authorization id.
 */
export function isAboutAnotherAttempt(charge: ChargeRecord, news: ChargeNews): boolean {
  if ("attempt" in news && news.attempt !== undefined && news.attempt !== charge.attempt) return true;
  const authorizationId = "authorizationId" in news ? news.authorizationId : undefined;
  return authorizationId !== undefined && isEarlierAuthorization(charge, authorizationId);
}

/** True when `authorizationId` is the authorization of an earlier attempt of the charge. */
export function isEarlierAuthorization(charge: ChargeRecord, authorizationId: string): boolean {
  const id = authorizationId.toLowerCase();
  return charge.previousAuthorizationIds?.some((previous) => previous.toLowerCase() === id) ?? false;
}

/** What a new attempt charges: the order as built now (the cart may have changed since). */
export type NextAttemptOrder = Pick<ChargeRecord, "amount" | "currency" | "captureMode"> &
  Partial<Pick<ChargeRecord, "orderFingerprint">> & {
    /** The next attempt's create call, recorded before it is sent (its key names the attempt). */
    pendingAuthorization?: (attempt: number) => ChargeRecord["pendingAuthorization"];
  };

/**
 * A new attempt at a failed charge (the shopper tries again, perhaps with another payment method):
 * the next attempt number, hence a new idempotency key. Undefined unless the charge failed.
 */
export function startNextAttempt(
  charge: ChargeRecord,
  order: NextAttemptOrder,
  now: Date,
): ChargeRecord | undefined {
  if (charge.status !== "failed") return undefined;
  const {
    authorizationId,
    orderId: _order,
    reason: _reason,
    operationLog: _log,
    pendingAuthorization: _pending,
    ...rest
  } = charge;
  const { pendingAuthorization, ...built } = order;
  const attempt = charge.attempt + 1;
  const pending = pendingAuthorization?.(attempt);
  // The earlier attempts' ids stay on the record: their late news must never reach this attempt.
  const previousAuthorizationIds = [...(charge.previousAuthorizationIds ?? [])];
  if (authorizationId !== undefined) previousAuthorizationIds.push(authorizationId.toLowerCase());
  return {
    ...rest,
    ...built,
    ...(previousAuthorizationIds.length === 0 ? {} : { previousAuthorizationIds }),
    ...(pending === undefined ? {} : { pendingAuthorization: pending }),
    attempt,
    status: "pending",
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: charge.version + 1,
    updatedAt: isoString(now.getTime()),
  };
}

function sameCharge(a: ChargeRecord, b: ChargeRecord): boolean {
  return (
    sameOperationLog(a.operationLog, b.operationLog) &&
    sameSendCounts(a.pendingAuthorization, b.pendingAuthorization) &&
    a.status === b.status &&
    a.authorizationId === b.authorizationId &&
    a.orderId === b.orderId &&
    a.reason === b.reason &&
    a.operations.capture === b.operations.capture &&
    a.operations.cancel === b.operations.cancel &&
    a.operations.refund === b.operations.refund
  );
}
