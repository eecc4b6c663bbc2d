import { lastScheduledAttemptAt } from "@purchase-auth/core";
import type { ChargeRecord } from "../stores/types.js";

/**
 * When a charge the service accepted (202) is overdue, in epoch ms: `graceMs` after the later of its
 * last scheduled attempt and its last news (an `authorization.retrying` webhook, say). By then the
 * service has attempted for the last time and redelivered its webhooks for a long while; if none
 * arrived, they were lost, and the service has no call to ask about an authorization.
 *
 * A charge stored before write-ahead records existed has no recorded schedule: it is counted from
 * its creation, as one attempt as soon as possible.
 */
export function outcomeOverdueAt(charge: ChargeRecord, graceMs: number): number {
  const pending = charge.pendingAuthorization;
  const sentAt = Date.parse(pending?.firstSentAt ?? charge.createdAt);
  const lastAttemptAt = lastScheduledAttemptAt(pending?.request.attemptSchedule, sentAt);
  return Math.max(lastAttemptAt, Date.parse(charge.updatedAt)) + graceMs;
}
