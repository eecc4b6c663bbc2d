import type { ProviderWebhookPayload, WebhookActionResult } from "@medusajs/framework/types";
import { PaymentActions } from "@medusajs/framework/utils";
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from "@purchase-auth/core";
import { finishRelease } from "./authorize-payment";
import { releaseAll } from "./order-operations";
import { answeredReview } from "./outcome-overdue";
import type { ProviderContext } from "./provider-context";
import { dataWithOrder } from "./provider-context";
import { isReleasing, type PurchaseAuthData } from "./session-data";
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
 * canceled meanwhile, or whose payment collection was paid by another session (a second payment
 * otherwise), is voided at the service (cancelled, or refunded if the service captured) and
 * recorded on the session, and Medusa is told nothing to do; so is a success for a session Medusa
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
      `purchase-auth: payment session ${sessionId} was being released by the reconcile job (the answer was lost); the service's order ${data.order_id} is released (${data.service_status}), Medusa records no payment for it`,
    );
  } catch (error) {
    context.logger?.warn(
      `purchase-auth: payment session ${sessionId} is being released (the reconcile job's answer was lost) and repeating the release failed (${(error as Error).message}); the reconcile job repeats it, Medusa records no payment for it`,
    );
  }
  return { action: PaymentActions.NOT_SUPPORTED };
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
