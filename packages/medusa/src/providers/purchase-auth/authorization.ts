import type { AuthorizationRequestInput, CreateAuthorizationResult } from "@purchase-auth/core";
import { logFieldsOf, toMedusaError } from "./errors";
import { authorizeKey } from "./idempotency-keys";
import { itemsForAuthorization } from "./order-lines";
import { firstSentAtOf, isWindowPassed, outcomeOfError, retryAdviceOf } from "./outcomes";
import type { ProviderContext } from "./provider-context";
import type { PurchaseAuthData } from "./session-data";

/** Authorizations declined for a reason "worth retrying" get this many attempts, each its own key. */
export const MAX_SYNCHRONOUS_ATTEMPTS = 3;

export type AuthorizationOutcome =
  /** `sentAt`: when the send that got this answer left (for a repeated key, the repeat). */
  | { kind: "done"; result: CreateAuthorizationResult; attempt: number; sentAt: Date }
  /** A definite answer that nothing was done; `attempt` is the last attempt made. */
  | { kind: "declined"; error: Error; reason: string | undefined; attempt: number }
  /** Perhaps done: repeat `attempt` with the same key (inside the key's window) to learn it. */
  | { kind: "uncertain"; attempt: number; firstSentAt: Date | undefined; windowPassed: boolean };

/** The authorization request of a payment session, from its stored data. */
export function authorizationRequest(
  context: ProviderContext,
  data: PurchaseAuthData,
  sessionId: string,
): AuthorizationRequestInput {
  const options = context.options;
  const reference = data.cart_id && data.cart_id.length <= 50 ? data.cart_id : undefined;
  const { lines } = itemsForAuthorization(
    options.orderLines === "cart" ? data.order_lines : null,
    data.amount!,
    {
      id: reference ?? sessionId,
      description: reference ? `Order of cart ${reference}` : "Order",
      vat: options.defaultVatPercent,
    },
  );
  const schedule = options.attemptSchedule;
  return {
    customerToken: data.customer_token!,
    ...(options.storeId ? { storeId: options.storeId } : {}),
    order: {
      items: lines,
      currency: data.currency!,
      ...(reference ? { reference } : {}),
      // Webhooks carry it back: it is how an event finds its Medusa payment session.
      actionReference: sessionId,
      captureMode: data.capture_mode ?? options.captureMode,
    },
    ...(schedule === "asap"
      ? {}
      : {
          attemptSchedule:
            schedule === "synchronous" ? { preferSynchronous: true } : { relative: schedule.relative },
        }),
  };
}

/**
 * Sends the authorization, from attempt `firstAttempt` on. Core's advice decides: "new-attempt"
 * (PAYMENT_FAILED, SERVICE_UNAVAILABLE) is tried again at once with the next key, up to
 * MAX_SYNCHRONOUS_ATTEMPTS; an unknown outcome is returned, never thrown, so the caller keeps the
 * attempt and its first-sent time and repeats it with the same key. Every key derives from the
 * session and the attempt number, so a repeat replays the same attempts and cannot charge twice.
 * `firstSentAt` (of an unknown attempt being repeated) makes core refuse to send a key that is too
 * old, instead of risking a second charge.
 */
export async function createAuthorization(
  context: ProviderContext,
  request: AuthorizationRequestInput,
  sessionId: string,
  firstAttempt: number,
  firstSentAt?: Date,
): Promise<AuthorizationOutcome> {
  for (let attempt = firstAttempt; ; attempt++) {
    // When this send left. For a repeated key the service may have created its authorization at the
    // first send or only now (the first send may never have reached it): counting an accepted
    // attempt's schedule from now is never too early.
    const sentAt = new Date();
    try {
      const result = await context.client.authorizations.create(request, {
        idempotencyKey: authorizeKey(context.options.idempotencyNamespace, sessionId, attempt),
        ...(attempt === firstAttempt && firstSentAt ? { firstSentAt } : {}),
      } as Parameters<ProviderContext["client"]["authorizations"]["create"]>[1]);
      return { kind: "done", result, attempt, sentAt };
    } catch (error) {
      const windowPassed = isWindowPassed(error);
      const uncertain = windowPassed || outcomeOfError(error) === "unknown";
      const again =
        !uncertain && retryAdviceOf(error) === "new-attempt" && attempt < MAX_SYNCHRONOUS_ATTEMPTS;
      context.logger?.warn(
        `purchase-auth: authorization of payment session ${sessionId} ${uncertain ? "has an unknown outcome" : "failed"}, attempt ${attempt}${again ? ", trying again" : ""} ${JSON.stringify(logFieldsOf(error))}`,
      );
      if (uncertain) {
        return {
          kind: "uncertain",
          attempt,
          firstSentAt: firstSentAtOf(error) ?? (attempt === firstAttempt ? firstSentAt : undefined),
          windowPassed,
        };
      }
      if (!again) {
        return {
          kind: "declined",
          error: toMedusaError("Authorization", error),
          reason: (error as { reason?: string }).reason,
          attempt,
        };
      }
    }
  }
}
