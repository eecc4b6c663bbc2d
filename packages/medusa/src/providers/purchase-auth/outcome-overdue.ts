import { lastScheduledAttemptAt } from "@purchase-auth/core";
import type { PurchaseAuthData } from "./session-data";

/**
 * The `review_reason` of a payment session the service accepted (202) whose outcome no webhook told
 * long after its last scheduled attempt. The name the Express adapter uses for the same case.
 */
export const OUTCOME_OVERDUE = "OUTCOME_OVERDUE";

/**
 * When an accepted session's outcome is overdue, in epoch ms: `graceMs` after the later of the
 * service's last scheduled attempt and the session's last news (`lastNewsAt`: its last change, such
 * as Medusa's order being canceled). By then the service has made its last attempt and redelivered
 * its webhooks for a long while; if none arrived they were lost, and the service has no call to ask
 * about an authorization.
 *
 * A session accepted before the send time and schedule were recorded counts as one attempt as soon
 * as possible, sent no later than its last news.
 */
export function outcomeOverdueAt(data: PurchaseAuthData, lastNewsAt: Date, graceMs: number): number {
  const recorded = data.authorize_sent_at ? Date.parse(data.authorize_sent_at) : Number.NaN;
  const sentAt = Number.isFinite(recorded) ? recorded : lastNewsAt.getTime();
  const lastAttemptAt = lastScheduledAttemptAt(data.attempt_schedule ?? undefined, sentAt);
  return Math.max(lastAttemptAt, lastNewsAt.getTime()) + graceMs;
}

/**
 * What a webhook telling the outcome also changes: an OUTCOME_OVERDUE review asked exactly that, so
 * it is answered and the session ends as it would have without the flag. Other reviews stay.
 */
export function answeredReview(current: PurchaseAuthData | undefined): Partial<PurchaseAuthData> {
  return current?.review_reason === OUTCOME_OVERDUE ? { review_reason: null } : {};
}
