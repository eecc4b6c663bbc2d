import {
  type AuthorizationRequest,
  DEFAULT_PATHS,
  OutcomeUnknownError,
  type PurchaseAuthClient,
  PurchaseAuthError,
  ServiceUnavailableError,
  validateAuthorizationRequest,
} from "@purchase-auth/core";
import type { ChargeRecord, PendingAuthorization } from "../stores/types.js";
import { mayHaveReached } from "./operation-log.js";

// The sends of a charge's create call, counted on its write-ahead record as a merchant write's are
// on its log entry (operation-log.ts): each send is counted in the stored change made before it
// goes out, and each that core reports as not delivered is counted too. While every counted send
// is one that did nothing, nothing can have been charged: the attempt fails, in the same stored
// change that counts the last of them, so "nothing happened, try again" is true, the reconciler
// never sends it, and the shopper's retry is a new attempt.

/** The reason stored on a charge whose create call never reached the service (the service's own). */
export const NOT_DELIVERED_REASON = "SERVICE_UNAVAILABLE";

/**
 * News of the current attempt's create call: a resend is about to go out (`create_sending`,
 * counted before it is sent), or a send ended without reaching the service (`create_not_delivered`).
 * Both apply only to the attempt they name while it is pending without an answer.
 */
export type CreateSendNews =
  | { kind: "create_sending"; attempt: number }
  | { kind: "create_not_delivered"; attempt: number };

/**
 * Applies `news` to `next` (a copy of the stored charge, changed in place): one more send, or one
 * more that did nothing, and then, when no counted send may have reached the service, `failed`.
 */
export function recordCreateSend(next: ChargeRecord, news: CreateSendNews): void {
  const pending = next.pendingAuthorization;
  if (next.status !== "pending" || next.authorizationId !== undefined || pending === undefined) return;
  const sends = pending.sends ?? 1;
  if (news.kind === "create_sending") {
    next.pendingAuthorization = { ...pending, sends: sends + 1 };
    return;
  }
  // Never more than were counted: a report can only be about a counted send.
  const undelivered = Math.min(sends, (pending.undelivered ?? 0) + 1);
  next.pendingAuthorization = { ...pending, sends, undelivered };
  if (!mayHaveReached(next.pendingAuthorization)) {
    next.status = "failed";
    next.reason = NOT_DELIVERED_REASON;
  }
}

/**
 * True when `next` counts the same sends as `current`. A record that drops its create call (its
 * authorization succeeded) changes nothing by that alone: a settled record an older release
 * stored with its details is not written again for it.
 */
export function sameSendCounts(
  current: PendingAuthorization | undefined,
  next: PendingAuthorization | undefined,
): boolean {
  if (next === undefined || current === next) return true;
  return current?.sends === next.sends && current?.undelivered === next.undelivered;
}

/**
 * True when the charge's current attempt failed because none of its counted sends may have reached
 * the service (SERVICE_UNAVAILABLE, counted so), not because the service declined it.
 */
export function failedNotDelivered(charge: ChargeRecord): boolean {
  const pending = charge.pendingAuthorization;
  return (
    charge.status === "failed" &&
    charge.reason === NOT_DELIVERED_REASON &&
    pending !== undefined &&
    !mayHaveReached(pending)
  );
}

/**
 * The error for a request that meant to resend an attempt that, meanwhile, failed because no send
 * of it reached the service (another request's send, perhaps one this request waited for): the
 * same answer that request had, "nothing was charged, try again" (503 `service-unavailable`), so
 * the next try starts a new attempt. This request sent nothing: `not_sent`.
 */
export function nothingReached(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    "Create authorization: no send of this attempt reached the service, and the attempt failed; nothing was charged, try again (a new attempt)",
    { outcome: "not_sent" },
  );
}

/**
 * Core's outcome `not_sent` or `refused` for a create call, other than the service's definite
 * answers that end the attempt anyway (a decline, an unknown token, a refused request: the caller
 * checks those first) and the key's window: this send did nothing. `not_sent`: the token endpoint
 * or the service unreachable before anything went out, a send aborted before it began; `refused`:
 * 429 on every try, a 401 or 403, an answer core does not understand.
 */
export function wasNotDelivered(error: unknown): boolean {
  return PurchaseAuthError.isInstance(error) && error.outcome !== "unknown";
}

/**
 * The error for a send that did nothing while another send of the same key may have reached the
 * service (another instance's, the reconciler's, or an earlier one): the charge stays pending for
 * that key, so never "nothing was charged". Answered 503 `payment-confirming`; `router.charge()`
 * callers see core's OutcomeUnknownError (retry: same-key). Its `write` names `path`, where the
 * client sends creates, so `client.resendUnknownWrite(error.write)` goes there too.
 */
export function stillConfirming(
  pending: PendingAuthorization,
  cause: unknown,
  path: string,
): OutcomeUnknownError {
  return new OutcomeUnknownError(
    "Create authorization: this send did not reach the service, but another send of the same idempotency key may have; the charge stays pending: repeat with the same key (the reconciler does)",
    {
      cause,
      write: {
        operation: "authorizations.create",
        method: "POST",
        path,
        body: wireBody(pending.request),
        idempotencyKey: pending.idempotencyKey,
        firstSentAt: pending.firstSentAt,
      },
    },
  );
}

/**
 * Where `client` sends creates: its `paths` override applied. A client from an older copy of core
 * does not say; it is assumed to use the default path.
 */
export function authorizationsPathOf(client: Pick<PurchaseAuthClient, "paths">): string {
  const paths = (client as { paths?: { authorizations?: unknown } }).paths;
  return typeof paths?.authorizations === "string" ? paths.authorizations : DEFAULT_PATHS.authorizations;
}

function wireBody(request: AuthorizationRequest): string | undefined {
  try {
    return JSON.stringify(validateAuthorizationRequest(request));
  } catch {
    return undefined;
  }
}
