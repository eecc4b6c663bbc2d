import { MedusaError, PaymentSessionStatus } from "@medusajs/framework/utils";
import type { AuthorizationRequestInput } from "@purchase-auth/core";
import { type AuthorizationOutcome, authorizationRequest, createAuthorization } from "./authorization";
import { claimedForCheckout, recordDecline, refuseUnlessClaimStillHeld } from "./checkout-claim";
import { describeReason } from "./errors";
import { releaseAll } from "./order-operations";
import { dataWithOrder, type ProviderContext } from "./provider-context";
import { isReleasing, laterState, type PurchaseAuthData, scheduleOrNull, writeData } from "./session-data";
import type { ResendClaim } from "./session-sql";
import { sessionStatusOfState } from "./status-mapping";

/**
 * Creates the authorization. The idempotency key derives from the payment session id and the
 * attempt number, so Medusa's retries, and a restart mid-call, get the first outcome back instead of
 * a second charge. 200 → authorized (captured with captureMode Auto); 202 → pending_authorization,
 * finished by the webhook; a definite decline → an error naming the reason, and the session's next
 * attempt number is saved, so the next completion (after the cause is fixed) is a new attempt with
 * a new key instead of the service replaying the decline for an hour. An unknown outcome → status
 * error with state "unknown": Medusa stores it, the cart does not complete, and the next
 * authorization (or the reconciler) repeats that attempt with the same key.
 */
export async function authorizePayment(
  context: ProviderContext,
  input: PurchaseAuthData,
  contextKey: string | undefined,
): Promise<{ status: PaymentSessionStatus; data: PurchaseAuthData }> {
  let data = input;
  const sessionId = data.session_id ?? contextKey;
  if (data.order_id && (data.state === "authorized" || data.state === "captured")) {
    return { status: sessionStatusOfState(data.state), data };
  }
  if (data.state === "pending_authorization") {
    const pending = { status: PaymentSessionStatus.PENDING_AUTHORIZATION, data };
    return sessionId ? await withStoredSuccess(context, sessionId, pending) : pending;
  }
  if (data.state === "canceled" || isReleasing(data)) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      "This payment was canceled; start a new payment session.",
    );
  }
  if (data.state === "failed") {
    throw new MedusaError(
      MedusaError.Types.PAYMENT_AUTHORIZATION_ERROR,
      `The payment was declined (${describeReason(data.failure_reason ?? undefined)}); start a new payment session to try again.`,
    );
  }
  if (!sessionId || !data.customer_token || !data.amount || !data.currency) {
    throw new MedusaError(
      MedusaError.Types.INVALID_DATA,
      "This payment session was not initiated by the purchase-auth provider.",
    );
  }
  const unknown = data.state === "unknown";
  let claim: ResendClaim | undefined;
  if (unknown) ({ data, claim } = await claimedForCheckout(context, data, sessionId));
  const request = authorizationRequest(context, data, sessionId);
  const outcome = await createAuthorization(
    context,
    request,
    sessionId,
    data.authorize_attempt ?? 1,
    unknown && data.authorize_first_sent_at ? new Date(data.authorize_first_sent_at) : undefined,
  );
  if (outcome.kind === "declined") {
    await recordDecline(context, sessionId, claim, {
      authorize_attempt: outcome.attempt + 1,
      failure_reason: outcome.reason ?? null,
    });
    throw outcome.error;
  }
  if (claim) await refuseUnlessClaimStillHeld(context, sessionId, claim, outcome);
  if (outcome.kind === "uncertain") {
    // Not a failure: the service may have authorized (even captured). Medusa stores the data of an
    // "error" answer, so the next authorizePayment (or deletePayment, or the reconciler) repeats it.
    const uncertain = { status: PaymentSessionStatus.ERROR, data: unknownData(data, sessionId, outcome) };
    return await withStoredSuccess(context, sessionId, uncertain);
  }
  const result = outcome.result;
  const authorized: PurchaseAuthData = {
    ...data,
    session_id: sessionId,
    authorization_id: result.authorizationId,
    failure_reason: null,
    authorize_attempt: null,
    authorize_first_sent_at: null,
  };
  if (!result.synchronous) {
    return await withStoredSuccess(context, sessionId, {
      status: PaymentSessionStatus.PENDING_AUTHORIZATION,
      data: { ...authorized, ...acceptedAt(request, outcome.sentAt), state: "pending_authorization" },
    });
  }
  const captured = data.capture_mode === "Auto";
  return await withStoredSuccess(context, sessionId, {
    status: captured ? PaymentSessionStatus.CAPTURED : PaymentSessionStatus.AUTHORIZED,
    data: {
      ...authorized,
      order_id: result.orderId ?? null,
      state: captured ? "captured" : "authorized",
      captured_amount: captured ? data.amount : "0.00",
      refunded_amount: "0.00",
    },
  });
}

type Authorized = { status: PaymentSessionStatus; data: PurchaseAuthData };

/**
 * Medusa writes the data authorizePayment returns over the session's, whatever was written while
 * the service call was in flight: a webhook's success (202 answered, then the success merged before
 * the answer got back) would be undone, its order id lost and no payment ever recorded. So the
 * stored data is read again just before returning: a success it holds (authorized or captured, with
 * an order id) wins when it is not behind the result (states only move forward).
 */
async function withStoredSuccess(
  context: ProviderContext,
  sessionId: string,
  result: Authorized,
): Promise<Authorized> {
  const stored = await context.records.sessionData(sessionId);
  if (!stored?.order_id || (stored.state !== "authorized" && stored.state !== "captured")) return result;
  if (result.data.state && laterState(result.data.state, stored.state) !== stored.state) return result;
  return {
    status: sessionStatusOfState(stored.state),
    data: {
      ...result.data,
      authorization_id: stored.authorization_id ?? result.data.authorization_id,
      order_id: stored.order_id,
      state: stored.state,
      captured_amount: stored.captured_amount ?? result.data.captured_amount,
      refunded_amount: stored.refunded_amount ?? result.data.refunded_amount,
      service_status: stored.service_status ?? result.data.service_status,
      failure_reason: null,
      review_reason: stored.review_reason,
      authorize_attempt: null,
      authorize_first_sent_at: null,
    },
  };
}

/**
 * What an accepted (202) session records to know when its outcome is overdue: when the send answered
 * 202 left (the service created the authorization no later) and the schedule it was given (the
 * options may change later).
 */
function acceptedAt(
  request: AuthorizationRequestInput,
  sentAt: Date,
): Pick<PurchaseAuthData, "authorize_sent_at" | "attempt_schedule"> {
  return {
    authorize_sent_at: sentAt.toISOString(),
    attempt_schedule: scheduleOrNull(request.attemptSchedule),
  };
}

function unknownData(
  data: PurchaseAuthData,
  sessionId: string,
  outcome: Extract<AuthorizationOutcome, { kind: "uncertain" }>,
): PurchaseAuthData {
  return {
    ...data,
    session_id: sessionId,
    state: "unknown",
    authorize_attempt: outcome.attempt,
    authorize_first_sent_at:
      outcome.firstSentAt?.toISOString() ?? data.authorize_first_sent_at ?? new Date().toISOString(),
    failure_reason: null,
    review_reason: outcome.windowPassed
      ? "The authorization's outcome is still unknown and its idempotency key is too old to send again: check the service for an order with actionReference = this payment session id."
      : null,
  };
}

/**
 * Deleting a session (Medusa does it when a cart changes, or the storefront re-initiates) must not
 * leave money behind: a session whose outcome is unknown is first resolved with the SAME key, and
 * any order found is released (cancelled, and what was captured refunded: Medusa never recorded
 * it), after marking the session releasing as the reconcile job does. An authorized session's
 * uncaptured hold is cancelled. When that cannot be done now, this throws, so Medusa keeps the
 * session instead of dropping it; so it does, releasing nothing, when Medusa recorded a payment for
 * the session (refuseIfPaymentRecorded). `stored` is the data as Medusa read it (the mark is guarded
 * on it).
 */
export async function deletePayment(
  context: ProviderContext,
  input: PurchaseAuthData,
  stored: Record<string, unknown> | null,
): Promise<PurchaseAuthData> {
  let data = input;
  // A release (the job's, or an earlier delete's) may have happened with its answer lost: repeat it
  // (same keys).
  if (isReleasing(data)) return (await finishRelease(context, data)).data;
  const wasUnknown = data.state === "unknown";
  const releases = wasUnknown || (!!data.order_id && data.state === "authorized");
  if (releases) await refuseIfPaymentRecorded(context, data);
  if (wasUnknown) {
    const resolution = await resolveUnknownAuthorization(
      context,
      data,
      undefined,
      deleteReleaseIntent(context, stored),
    );
    if (resolution.kind === "changed") {
      throw new MedusaError(
        MedusaError.Types.CONFLICT,
        `Payment session ${data.session_id} changed while it was being deleted (the reconcile job, a webhook or a checkout is settling it); nothing was released. Try again in a moment.`,
      );
    }
    if (resolution.kind === "still_unknown") {
      throw new MedusaError(
        MedusaError.Types.UNEXPECTED_STATE,
        `Payment session ${data.session_id}: the service has not told whether authorization attempt ${data.authorize_attempt ?? 1} went through, so the session cannot be deleted yet. Try again later (the same idempotency key is reused, it cannot charge twice).`,
      );
    }
    if (resolution.kind === "pending") {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `Payment session ${data.session_id}: authorization ${resolution.data.authorization_id} is still pending at the service; the session cannot be deleted until it is settled.`,
      );
    }
    return resolution.data;
  }
  if (data.order_id && data.state === "authorized") {
    const order = await releaseAll(
      context,
      data.order_id,
      data.session_id ?? data.order_id,
      "its payment session was deleted",
    );
    data = { ...dataWithOrder(data, order), authorize_attempt: null };
  }
  return data;
}

/**
 * A session Medusa recorded a (live) payment for holds the order's money: it is captured, refunded
 * or cancelled through that payment, never released by deleting the session. Medusa deletes every
 * session of a collection when a new session is created on it, also after the cart completed (the
 * store route, which anyone with the cart id can call; the session's data still reads "authorized"
 * after the admin captured, Medusa never rewrites it), so releasing here would cancel a placed
 * order's hold or refund its capture. Throwing makes Medusa keep the session (its workflow fails and
 * compensates). Only a session with no payment (a cart that did not complete, an unknown outcome
 * the shopper re-initiates after) is released.
 */
async function refuseIfPaymentRecorded(context: ProviderContext, data: PurchaseAuthData): Promise<void> {
  if (!data.session_id) return;
  const payment = await context.records.livePaymentOfSession(data.session_id);
  if (!payment) return;
  throw new MedusaError(
    MedusaError.Types.NOT_ALLOWED,
    `Payment session ${data.session_id} has payment ${payment.id} recorded in Medusa: deleting the session releases nothing and is refused. Capture, refund or cancel the payment instead.`,
  );
}

/**
 * deletePayment's mark, the reconcile job's guarded write: the session becomes releasing only while
 * its data is still what Medusa read, so if the release's answer is lost the late
 * authorization.succeeded never authorizes it (webhooks repeat the release or leave it to the job,
 * whose next run finishes it). It also requires that nobody holds a live resend claim (the delete
 * holds none): Medusa may have read the session after a checkout confirmed (and renewed) its claim,
 * while that checkout is about to return authorized and Medusa to record its payment; releasing
 * then would cancel the order Medusa records as paid. A live claim refuses the delete (CONFLICT),
 * nothing released. Should Medusa have deleted the row meanwhile, the release goes ahead:
 * a late success for a deleted session finds no session and is released too (same keys), never
 * authorized.
 */
function deleteReleaseIntent(
  context: ProviderContext,
  stored: Record<string, unknown> | null,
): RecordReleaseIntent {
  return async (releasing) => {
    const sessionId = releasing.session_id;
    if (!sessionId) return false;
    if (await context.records.replaceDataIfUnchangedAndUnclaimed(sessionId, stored, writeData(releasing))) {
      return true;
    }
    return await context.records.sessionDeleted(sessionId);
  };
}

export type UnknownResolution =
  /** Nothing was charged (a definite decline): the session is failed. */
  | { kind: "declined"; data: PurchaseAuthData }
  /** The service authorized: its order was released (Medusa never completed the cart on it). */
  | { kind: "released"; data: PurchaseAuthData }
  /** The service authorized, but the release could not be recorded first (the session changed): nothing sent. */
  | { kind: "changed"; data: PurchaseAuthData }
  /** Accepted (202): the webhook will tell. */
  | { kind: "pending"; data: PurchaseAuthData }
  /** Still unknown; `data.review_reason` is set once the key is too old to send again. */
  | { kind: "still_unknown"; data: PurchaseAuthData };

/**
 * Records that the release of `releasing.order_id` is about to be sent (one guarded write); false
 * when the session changed since it was read, and then nothing is sent.
 */
export type RecordReleaseIntent = (releasing: PurchaseAuthData) => Promise<boolean>;

const UNKNOWN_RELEASE_WHY = "its authorization's outcome was unknown and the cart did not complete on it";

/**
 * Repeats the unknown attempt with its key (core refuses when the key is past the service's
 * idempotency window: then it is flagged for review). What it finds is settled so no money is held
 * for a cart that never completed: an order is released in full. With `recordIntent` (the reconcile
 * job) the session is first marked releasing, so a lost answer to the release never lets a late
 * success authorize it.
 */
export async function resolveUnknownAuthorization(
  context: ProviderContext,
  data: PurchaseAuthData,
  /** The caller's clock (the job run's `now`, which measures the release's age later); else the wall clock. */
  now: Date = new Date(),
  recordIntent?: RecordReleaseIntent,
): Promise<UnknownResolution> {
  const sessionId = data.session_id;
  if (data.state !== "unknown" || !sessionId || !data.customer_token || !data.amount || !data.currency) {
    return { kind: "still_unknown", data };
  }
  const request = authorizationRequest(context, data, sessionId);
  const outcome = await createAuthorization(
    context,
    request,
    sessionId,
    data.authorize_attempt ?? 1,
    data.authorize_first_sent_at ? new Date(data.authorize_first_sent_at) : undefined,
  );
  if (outcome.kind === "uncertain")
    return { kind: "still_unknown", data: unknownData(data, sessionId, outcome) };
  if (outcome.kind === "declined") {
    return {
      kind: "declined",
      data: {
        ...data,
        state: "failed",
        failure_reason: outcome.reason ?? null,
        authorize_attempt: outcome.attempt + 1,
        authorize_first_sent_at: null,
      },
    };
  }
  if (!outcome.result.orderId) {
    return {
      kind: "pending",
      data: {
        ...data,
        authorization_id: outcome.result.authorizationId,
        authorize_first_sent_at: null,
        review_reason: null,
        ...acceptedAt(request, outcome.sentAt),
        state: "pending_authorization",
      },
    };
  }
  // Still "unknown" until the release's answer is known; the keys derive from the session.
  const releasing: PurchaseAuthData = {
    ...data,
    authorization_id: outcome.result.authorizationId,
    order_id: outcome.result.orderId,
    release_started_at: now.toISOString(),
    release_key_base: sessionId,
  };
  if (recordIntent && !(await recordIntent(releasing))) return { kind: "changed", data: releasing };
  return await finishRelease(context, releasing);
}

/**
 * Sends (or repeats, with the same keys) the release of a releasing session's order: whatever the
 * service already did counts as done, so it is released at most once.
 */
export async function finishRelease(
  context: ProviderContext,
  releasing: PurchaseAuthData,
): Promise<Extract<UnknownResolution, { kind: "released" }>> {
  const keyBase = releasing.release_key_base ?? releasing.session_id;
  if (!releasing.order_id || !keyBase) {
    throw new MedusaError(MedusaError.Types.INVALID_DATA, "This payment session has no order to release.");
  }
  const order = await releaseAll(context, releasing.order_id, keyBase, UNKNOWN_RELEASE_WHY);
  return {
    kind: "released",
    data: {
      ...dataWithOrder(releasing, order),
      // Given back in full (cancelled, or refunded when captured): nothing is held for Medusa.
      state: "canceled",
      authorize_attempt: null,
      authorize_first_sent_at: null,
      review_reason: null,
    },
  };
}
