import { errorReasonInfo, formatCents, type OrderStatus } from "@purchase-auth/core";
import type { SandboxContext } from "../context.js";
import { newGuid } from "../core/ids.js";
import { toEpochMs, toStoredTime } from "../core/stored-time.js";
import type { AttemptRecord, AuthorizationRecord } from "../state/authorizations.js";
import { appended } from "../state/compact-list.js";
import { type CustomerTokenRecord, TOKEN_STATUS_REASONS } from "../state/customer-tokens.js";
import { captureOrder, expireOrder, type OrderRecord, orderStatus } from "../state/orders.js";
import { attemptDueAt } from "./attempt-plan.js";

export type AttemptResult = { ok: true; order: OrderRecord } | { ok: false; reason: string };

/**
 * Performs the attempts of authorizations (supplement D): decides each attempt's outcome from the
 * customer token, creates the order on success, and on failure either schedules the next attempt
 * (reason worth retrying, attempts left) or ends the authorization. Every step emits its webhook.
 */
export class AuthorizationProcessor {
  readonly #ctx: SandboxContext;
  /** Whether the job that expires the front of the order expiry queue is scheduled. */
  #expiryJobScheduled = false;

  constructor(ctx: SandboxContext) {
    this.#ctx = ctx;
  }

  /** Schedules the first attempt of an authorization answered with 202. */
  start(auth: AuthorizationRecord): void {
    const now = this.#ctx.clock.now();
    this.#schedule(auth, 1, attemptDueAt(auth.plan, 1, toEpochMs(auth.createdAt), now));
  }

  /**
   * The single attempt of a preferSynchronous request, inside the HTTP call, at `now` (the request's
   * reading of the clock). No webhook on failure.
   */
  attemptSynchronously(auth: AuthorizationRecord, now: number): AttemptResult {
    return this.#attempt(auth, 1, true, now);
  }

  #schedule(auth: AuthorizationRecord, attempt: number, dueAt: number): void {
    auth.nextAttemptAt = dueAt;
    const { authorizationId } = auth;
    this.#ctx.scheduler.schedule(dueAt, `attempt ${attempt} of ${authorizationId}`, () => {
      // Gone when reset or forgotten beyond maxStoredObjects; then there is nothing to attempt.
      const current = this.#ctx.authorizations.get(authorizationId);
      if (current === auth && auth.status === "Scheduled") {
        this.#attempt(auth, attempt, false, this.#ctx.clock.now());
      }
    });
  }

  /** One attempt at `now`: its record, the order and the events of a success all carry that time. */
  #attempt(auth: AuthorizationRecord, attempt: number, synchronous: boolean, now: number): AttemptResult {
    const verdict = judgeAttempt(this.#ctx.customerTokens.get(auth.customerToken), auth.totalCents);
    this.#record(auth, attempt, verdict.reason, synchronous, now);
    if (verdict.reason === undefined) return { ok: true, order: this.#succeed(auth, verdict.token, now) };
    this.#fail(auth, attempt, verdict.reason, synchronous);
    return { ok: false, reason: verdict.reason };
  }

  #record(
    auth: AuthorizationRecord,
    attempt: number,
    reason: string | undefined,
    synchronous: boolean,
    now: number,
  ): void {
    const ctx = this.#ctx;
    const { authorizationId, merchantId } = auth;
    const at = ctx.clock.iso(now);
    // Two literals rather than a spread: the same keys in the same order, without a copy.
    const record: AttemptRecord =
      reason === undefined
        ? { authorizationId, merchantId, attempt, at, outcome: "succeeded", synchronous }
        : { authorizationId, merchantId, attempt, at, outcome: "failed", reason, synchronous };
    auth.attempts = appended(auth.attempts, record);
    auth.nextAttemptAt = undefined;
    ctx.attemptLog.push(record);
    ctx.stats.attempts++;
  }

  /** Worth retrying with attempts left: schedule the next one; otherwise the authorization has failed. */
  #fail(auth: AuthorizationRecord, attempt: number, reason: string, synchronous: boolean): void {
    const ctx = this.#ctx;
    const worthRetrying = errorReasonInfo(reason)?.worthRetrying ?? false;
    if (!synchronous && worthRetrying && attempt < auth.maxAttempts) {
      const now = ctx.clock.now();
      const nextAttemptAt = attemptDueAt(auth.plan, attempt + 1, now, now);
      this.#schedule(auth, attempt + 1, nextAttemptAt);
      ctx.webhooks.emit(auth.merchantId, "authorization.retrying", {
        authorizationId: auth.authorizationId,
        customerToken: auth.customerToken,
        reason,
        attempt,
        maxAttempts: auth.maxAttempts,
        nextAttemptAt: new Date(nextAttemptAt).toISOString(),
      });
      return;
    }
    auth.status = "Failed";
    auth.failureReason = reason;
    if (synchronous) return; // the 422 answer carries the reason
    ctx.webhooks.emit(auth.merchantId, "authorization.failed", {
      authorizationId: auth.authorizationId,
      customerToken: auth.customerToken,
      reference: auth.reference,
      actionReference: auth.actionReference,
      reason,
      attempt,
    });
  }

  #succeed(auth: AuthorizationRecord, token: CustomerTokenRecord, now: number): OrderRecord {
    const ctx = this.#ctx;
    if (token.fundsCents !== undefined) token.fundsCents -= auth.totalCents; // reserved for this order

    const order: OrderRecord = ctx.orders.add({
      orderId: newGuid(),
      authorizationId: auth.authorizationId,
      merchantId: auth.merchantId,
      customerToken: auth.customerToken,
      storeId: auth.storeId,
      reference: auth.reference,
      currency: auth.currency,
      captureMode: auth.captureMode,
      items: auth.items,
      createdAt: toStoredTime(now),
      totalCents: auth.totalCents,
      capturedCents: 0n,
      refundedCents: 0n,
      cancelledCents: 0n,
      expired: false,
      operations: undefined,
    });
    ctx.stats.orders++;
    auth.status = "Succeeded";
    auth.orderId = order.orderId;

    ctx.webhooks.emitWith(
      auth.merchantId,
      "authorization.succeeded",
      succeededData,
      auth,
      order,
      undefined,
      now,
    );

    if (auth.captureMode === "Auto") {
      captureOrder(order, undefined, { at: ctx.clock.iso(now) });
      this.emitOrderEvent("order.captured", order, order.totalCents, now);
    } else {
      ctx.orders.awaitExpiry(order);
      this.#scheduleExpiryJob();
    }
    return order;
  }

  /** order.captured / order.refunded / order.cancelled with the amount of this one write. */
  emitOrderEvent(
    type: "order.captured" | "order.refunded" | "order.cancelled",
    order: OrderRecord,
    amountCents: bigint,
    at?: number,
  ): void {
    this.#ctx.webhooks.emitWith(
      order.merchantId,
      type,
      orderEventData,
      order,
      amountCents,
      orderStatus(order),
      at,
    );
  }

  /** Gives reserved funds back to the token (cancel, expiry, refund). */
  releaseFunds(customerToken: string, amountCents: bigint): void {
    const token = this.#ctx.customerTokens.get(customerToken);
    if (token?.fundsCents !== undefined) token.fundsCents += amountCents;
  }

  /** Forgets scheduling state (the scheduler was cleared by a reset). */
  reset(): void {
    this.#expiryJobScheduled = false;
  }

  /**
   * A manual-capture order's uncaptured remainder lapses `orderExpiryMs` after creation; announced as
   * order.cancelled with status Expired. One job serves the queue: it expires what is due, then
   * schedules itself for the next order in line.
   */
  #scheduleExpiryJob(): void {
    const ctx = this.#ctx;
    const next = ctx.orders.nextToExpire();
    if (this.#expiryJobScheduled || next === undefined) return;
    this.#expiryJobScheduled = true;
    ctx.scheduler.schedule(toEpochMs(next.createdAt) + ctx.options.orderExpiryMs, "order expiry", () => {
      this.#expiryJobScheduled = false;
      for (const order of ctx.orders.takeExpiring(ctx.clock.now() - ctx.options.orderExpiryMs)) {
        const released = expireOrder(order, ctx.clock.nowIso());
        if (released === 0n) continue;
        this.releaseFunds(order.customerToken, released);
        this.emitOrderEvent("order.cancelled", order, released);
      }
      this.#scheduleExpiryJob();
    });
  }
}

// Event data built when the event is read or delivered (see EventHistory), from fields of the
// records that never change once set and from the values recorded at the emit.

function succeededData(auth: AuthorizationRecord, order: OrderRecord) {
  return {
    authorizationId: auth.authorizationId,
    orderId: order.orderId,
    customerToken: auth.customerToken,
    reference: auth.reference,
    actionReference: auth.actionReference,
    captureMode: auth.captureMode,
    amount: formatCents(auth.totalCents),
    currency: auth.currency,
  };
}

function orderEventData(order: OrderRecord, amountCents: bigint, status: OrderStatus) {
  return {
    orderId: order.orderId,
    authorizationId: order.authorizationId,
    amount: formatCents(amountCents),
    currency: order.currency,
    status,
  };
}

/**
 * How an attempt goes. It fails with the first that applies: the token is gone (only after a reset)
 * or its status is not Active (it may have changed since the request), the next reason of the
 * token's failure queue (consumed), the forced failure reason, an expired payment method,
 * insufficient funds.
 */
function judgeAttempt(
  token: CustomerTokenRecord | undefined,
  totalCents: bigint,
): { reason: undefined; token: CustomerTokenRecord } | { reason: string } {
  if (token === undefined) return { reason: "TOKEN_CANCELLED" };
  const statusReason = TOKEN_STATUS_REASONS[token.status];
  if (statusReason !== undefined) return { reason: statusReason };
  const queued = token.failNextAttempts.shift();
  if (queued !== undefined) return { reason: queued };
  if (token.failureReason !== undefined) return { reason: token.failureReason };
  if (token.paymentMethodExpired) return { reason: "PAYMENT_METHOD_EXPIRED" };
  if (token.fundsCents !== undefined && token.fundsCents < totalCents)
    return { reason: "PAYMENT_METHOD_NO_FUNDS" };
  return { reason: undefined, token };
}
