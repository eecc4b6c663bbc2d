import { lastScheduledAttemptAt } from "@purchase-auth/core";
import type { ChargeRecord } from "../stores/types.js";

/**
 * When a charge the service accepted (202) is overdue, in epoch ms: `graceMs` after the later of its
 * last scheduled attempt and its last recorded change (the first `authorization.retrying`, say). By
 * then the service has attempted for the last time and redelivered its webhooks for a long while;
 * if none arrived, they were lost, and the service has no call to ask about an authorization.
 *
 * The schedule is counted from the latest moment the service can have created the authorization:
 * the first send of its key plus `resendWindowMs` (a resend of a lost first send creates it then).
 * A charge stored before write-ahead records existed has no recorded schedule: it is counted from
 * its creation, as one attempt as soon as possible.
 */
export function outcomeOverdueAt(
  charge: ChargeRecord,
  options: { outcomeGraceMs: number; resendWindowMs: number },
): number {
  const pending = charge.pendingAuthorization;
  const createdBy =
    pending === undefined
      ? Date.parse(charge.createdAt)
      : Date.parse(pending.firstSentAt) + options.resendWindowMs;
  const lastAttemptAt = lastScheduledAttemptAt(pending?.request.attemptSchedule, createdBy);
  return Math.max(lastAttemptAt, Date.parse(charge.updatedAt)) + options.outcomeGraceMs;
}
