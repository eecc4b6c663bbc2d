import type { DeclinePolicy } from "@purchase-auth/batch";
import { errorReasonInfo } from "@purchase-auth/core";

// How a declined renewal is handled, as a merchant needs it:
// - reasons not worth retrying (TOKEN_REVOKED, PAYMENT_METHOD_NO_FUNDS, PAYMENT_DENIED, …) stop the
//   subscription at once, and the customer and the merchant see why;
// - PAYMENT_FAILED and SERVICE_UNAVAILABLE are retried as NEW attempts, each with a new idempotency
//   key (the batch package derives it from the attempt number; a key is never reused), one day and
//   then three days later on the service's clock. When those fail too, the subscription stops.

const DAY_MS = 24 * 60 * 60_000;

/** Delays before attempts 2 and 3 of a period, on the service's clock. */
export const RENEWAL_RETRY_DELAYS_MS: readonly number[] = [DAY_MS, 3 * DAY_MS];

/**
 * The batch runner's own policy: as many retries as above, each due at once by the runner's clock
 * (the system clock), because the shop decides WHEN on the service's clock: it calls the runner
 * again for a period only once `nextAttemptAt` has passed there.
 */
export const RENEWAL_DECLINE_POLICY: DeclinePolicy = {
  retryDelaysMs: RENEWAL_RETRY_DELAYS_MS.map(() => 0),
};

export const MAX_RENEWAL_ATTEMPTS = RENEWAL_RETRY_DELAYS_MS.length + 1;

/** When to try a period again after attempt `attempt` was declined with a reason worth retrying. */
export function nextAttemptAt(now: Date, attempt: number): Date | undefined {
  const delay = RENEWAL_RETRY_DELAYS_MS[attempt - 1];
  return delay === undefined ? undefined : new Date(now.getTime() + delay);
}

export function worthRetrying(reason: string | undefined): boolean {
  return reason !== undefined && errorReasonInfo(reason)?.worthRetrying === true;
}

/** The batch runner reports an unknown customer token as NotFoundError; the shop's word for it. */
export function declineReasonOf(reason: string | undefined): string {
  if (reason === undefined) return "PAYMENT_DENIED";
  if (reason === "NotFoundError") return "CUSTOMER_TOKEN_NOT_FOUND";
  return reason.split(": ")[0]!;
}

/** For the merchant: why a subscription stopped, in words. */
export function stopExplanation(reason: string, attempts: number): string {
  if (reason === "CANCELLED_BY_CUSTOMER") return "The customer stopped it.";
  if (reason === "NEEDS_REVIEW") {
    return "A renewal's outcome stayed unknown past the idempotency window: look it up at the service before charging again.";
  }
  if (worthRetrying(reason)) {
    return `${reason} on all ${attempts} attempts (each a new attempt with a new key): retries exhausted.`;
  }
  return `${reason}: not worth retrying, so the subscription stopped at once.`;
}
