import type { ProviderWebhookPayload, WebhookActionResult } from "@medusajs/framework/types";
import { PaymentActions } from "@medusajs/framework/utils";
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from "@purchase-auth/core";
import { finishRelease } from "./authorize-payment";
import { releaseAll } from "./order-operations";
import { answeredReview } from "./outcome-overdue";
import type { ProviderContext } from "./provider-context";
import { dataWithOrder } from "./provider-context";
import { isReleasing, type PurchaseAuthData, readData, writeData } from "./session-data";
import { heldByJob } from "./session-sql";
import { rawBodyOf } from "./webhook-body";
import { mapWebhookEvent } from "./webhook-mapping";

type Payload = ProviderWebhookPayload["payload"];

/** The verified event, or undefined (logged) when it does not verify or is not one we know. */
export function verifiedEvent(context: ProviderContext, payload: Payload): WebhookEvent | undefined {
  try {
    return verifyWebhook(
      rawBodyOf(payload.rawData),
      headersOf(payload.headers),
      context.options.webhookSecrets,
      {
        toleranceSeconds: context.options.webhookToleranceSeconds,
      },
    );
  } catch (error) {
    if (!WebhookVerificationError.isInstance(error)) throw error;
    const level = error.failure === "unsupported_event" ? "info" : "warn";
    context.logger?.[level](`purchase-auth: webhook ignored (${error.failure}): ${error.message}`);
    return undefined;
  }
}

/**
 * Medusa's part of a webhook: authorization.succeeded → authorized (captured for Auto),
 * authorization.failed → failed, with the order id or reason first written to the session's data
 * (Medusa's payment workflow reads only that). A success for a session whose Medusa order was
 * canceled meanwhile, or whose payment collection was paid by another session (that payment still
 * holds money, and the session has no live payment of its own: a second payment otherwise), is
 * voided at the service (cancelled, or refunded if the service captured) and recorded on the
 * session, and Medusa is told nothing to do; so is a success for a session Medusa
 * deleted (replaced while pending) that no live session or payment holds. A session the reconcile job flagged
 * OUTCOME_OVERDUE is not skipped: the outcome it waited for clears the flag. The data is merged
 * with the session's row locked (a state only moves forward; while the reconcile job resends the
 * session's key the merge waits for it), and the action is decided from what was written: a success
 * for a session the job released meanwhile (`canceled`), or left releasing (its release's answer
 * lost), is "not_supported". The plugin's webhook subscriber handles the events Medusa ignores
 * (order and token events, the failure's visible marks).
 */
export async function webhookActionAndData(
  context: ProviderContext,
  payload: Payload,
): Promise<WebhookActionResult> {
  const event = verifiedEvent(context, payload);
  if (!event) return { action: PaymentActions.NOT_SUPPORTED };
  const outcome = mapWebhookEvent(event);
  if (outcome.log) context.logger?.[outcome.log.level](outcome.log.message);
  if (!outcome.sessionId) return { action: outcome.action };
  const current = await context.records.sessionData(outcome.sessionId);
  if (current && isReleasing(current)) return await finishReleasing(context, outcome.sessionId, current);
  if (event.type === "authorization.succeeded" && !current) {
    const released = await releasedIfHeldByNobody(context, event, outcome.sessionId);
    if (released) return { action: PaymentActions.NOT_SUPPORTED };
  }
  if (event.type === "authorization.succeeded") {
    const canceled = !!current?.medusa_canceled_at || current?.state === "canceled";
    if (canceled || (current && (await context.records.paidOtherwise(outcome.sessionId)))) {
      const why = canceled ? "its Medusa order was canceled" : "its payment collection was paid another way";
      const order = await releaseAll(context, event.data.orderId, outcome.sessionId, why);
      await context.records.mergeSessionData(outcome.sessionId, {
        ...dataWithOrder(current, order),
        ...answeredReview(current),
        state: "canceled",
        failure_reason: null,
      });
      context.logger?.warn(
        `purchase-auth: authorization ${event.data.authorizationId} of payment session ${outcome.sessionId} succeeded after ${why}; the service's order ${order.orderId} was voided (${order.status})`,
      );
      return { action: PaymentActions.NOT_SUPPORTED };
    }
  }
  if (
    event.type === "authorization.succeeded" &&
    outcome.action === PaymentActions.AUTHORIZED &&
    current?.state === "unknown" &&
    !heldByJob(current)
  ) {
    const stranded = await context.records.strandedCheckoutData(outcome.sessionId);
    if (stranded) return await releaseStranded(context, event, outcome.sessionId, current, stranded);
  }
  if (outcome.update) {
    // A session flagged OUTCOME_OVERDUE moves on like any other: the flag only asked for this news.
    // One locked merge: what is returned is decided from the data written, not from the read above.
    const written = await context.records.mergeSessionData(outcome.sessionId, {
      ...outcome.update,
      ...answeredReview(current),
    });
    if (!written) {
      context.logger?.info(
        `purchase-auth: webhook ${event.id} names payment session ${outcome.sessionId}, which does not exist (any more) or is not this provider's; ignored`,
      );
      return { action: PaymentActions.NOT_SUPPORTED };
    }
    if (
      event.type === "authorization.succeeded" &&
      written.state !== "authorized" &&
      written.state !== "captured"
    ) {
      // Settled otherwise meanwhile (the reconcile job released the order, the order was canceled):
      // Medusa must not record a payment for it.
      context.logger?.warn(
        `purchase-auth: authorization ${event.data.authorizationId} succeeded, but payment session ${outcome.sessionId} is ${written.state} (order ${written.order_id ?? "none"}, ${written.service_status ?? "status not read"}); Medusa records no payment for it`,
      );
      return { action: PaymentActions.NOT_SUPPORTED };
    }
  }
  return { action: outcome.action, data: { session_id: outcome.sessionId, amount: outcome.amount ?? "0" } };
}

/**
 * An event for a session the reconcile job left releasing: the job sent the release of its order and
 * the answer was lost, so the service may hold nothing. It is never authorized: the release is
 * repeated with the job's keys (the service does it at most once) and the session recorded canceled.
 * Should that fail now, or the job be at it right now, the job finishes it on its next run.
 */
async function finishReleasing(
  context: ProviderContext,
  sessionId: string,
  current: PurchaseAuthData,
  cause = "by the reconcile job (the answer was lost)",
): Promise<WebhookActionResult> {
  if (heldByJob(current)) {
    context.logger?.info(
      `purchase-auth: payment session ${sessionId} is being released by the reconcile job; Medusa records no payment for it`,
    );
    return { action: PaymentActions.NOT_SUPPORTED };
  }
  try {
    const { data } = await finishRelease(context, current);
    await context.records.mergeSessionData(sessionId, {
      order_id: data.order_id,
      authorization_id: data.authorization_id,
      state: data.state,
      captured_amount: data.captured_amount,
      refunded_amount: data.refunded_amount,
      cancelled_amount: data.cancelled_amount,
      service_status: data.service_status,
      authorize_attempt: null,
      authorize_first_sent_at: null,
      // Released: a flag asking a person to check the stuck release no longer applies.
      review_reason: null,
    });
    context.logger?.warn(
      `purchase-auth: payment session ${sessionId} was being released ${cause}; the service's order ${data.order_id} is released (${data.service_status}), Medusa records no payment for it`,
    );
  } catch (error) {
    context.logger?.warn(
      `purchase-auth: payment session ${sessionId} is being released ${cause} and the release failed (${(error as Error).message}); the reconcile job repeats it, Medusa records no payment for it`,
    );
  }
  return { action: PaymentActions.NOT_SUPPORTED };
}

/**
 * A success (Manual capture) for a checkout's session whose outcome was unknown and that Medusa left
 * in status `error`: its cart cannot complete on it (Medusa's payment workflow only completes the
 * cart, and the cart's validation refuses an `error` session), so no payment would ever be recorded
 * and the hold would stay until it expires at the service. Authorizing the session's data would
 * only hide it from the reconcile job. It is released instead, as the job releases what its resend
 * finds: first marked releasing (one write, only while the session is as read and nobody holds a
 * resend claim; else this throws and the event bus, or the job's resend, settles it), then the
 * order cancelled with the session's release keys, and the session recorded canceled. Should the
 * release fail, the session stays releasing and the job's next run repeats it. Auto capture is not
 * concerned: Medusa's workflow records the payment of a `captured` success and completes the cart.
 */
async function releaseStranded(
  context: ProviderContext,
  event: Extract<WebhookEvent, { type: "authorization.succeeded" }>,
  sessionId: string,
  current: PurchaseAuthData,
  stored: Record<string, unknown>,
): Promise<WebhookActionResult> {
  const releasing: PurchaseAuthData = {
    ...readData(stored),
    authorization_id: event.data.authorizationId,
    order_id: current.order_id ?? event.data.orderId,
    release_started_at: new Date().toISOString(),
    release_key_base: sessionId,
    resend_claimed_at: null,
    resend_claimed_by: null,
  };
  if (
    releasing.state !== "unknown" ||
    !(await context.records.replaceDataIfUnchangedAndUnclaimed(sessionId, stored, writeData(releasing)))
  ) {
    throw new Error(
      `purchase-auth: payment session ${sessionId} changed while its late authorization.succeeded was handled (a checkout, the reconcile job or a delete is settling it); try again`,
    );
  }
  return await finishReleasing(
    context,
    sessionId,
    releasing,
    `after authorization ${event.data.authorizationId} succeeded late (its outcome was unknown and the cart cannot complete on the session)`,
  );
}

/**
 * A success for a session that is gone: Medusa deleted it (a pending (202) session is deleted when
 * the shopper starts paying again, and the new session may pay too). Nobody would ever capture or
 * release its order, so it is released (cancelled, what the service captured refunded; keys derive
 * from the session, so a redelivery sends nothing twice), unless a live session or payment holds the
 * authorization or its order. True when released.
 */
async function releasedIfHeldByNobody(
  context: ProviderContext,
  event: Extract<WebhookEvent, { type: "authorization.succeeded" }>,
  sessionId: string,
): Promise<boolean> {
  const { authorizationId, orderId } = event.data;
  if (!(await context.records.heldByNobody(sessionId, authorizationId, orderId))) return false;
  const order = await releaseAll(context, orderId, sessionId, "its payment session was deleted");
  context.logger?.warn(
    `purchase-auth: authorization ${authorizationId} succeeded for payment session ${sessionId}, which Medusa deleted (replaced) and no payment holds; the service's order ${orderId} was released (${order.status}, captured ${order.capturedAmount}, refunded ${order.refundedAmount})`,
  );
  return true;
}

function headersOf(headers: Record<string, unknown>): Record<string, string | string[] | undefined> {
  const result: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value === "string" || Array.isArray(value))
      result[name.toLowerCase()] = value as string | string[];
  }
  return result;
}
