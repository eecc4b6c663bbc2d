import type { ItemStatus, StatusCounts } from "./state/types.js";

/** What a batch came to, from the store's records (so a resumed run reports the whole batch). */
export interface BatchSummary {
  batchId: string;
  /** Items registered. */
  total: number;
  /** Authorized synchronously (the service's 200 with an order id). */
  charged: number;
  /** Accepted (202): the service attempts them; the outcome arrives by webhook. */
  accepted: number;
  /** Declined, by reason (not worth retrying, or retries exhausted). */
  declined: { total: number; byReason: Record<string, number> };
  /** Refused for another cause (invalid order, unknown customer token, ...), by reason. */
  rejected: { total: number; byReason: Record<string, number> };
  /** Sent, and no definite answer yet: a resume resends them with the same key within the window. */
  unknown: number;
  /** Outcome unknown past the key's idempotency window: look them up at the service. */
  needsReview: { total: number; byReason: Record<string, number> };
  /** A new attempt is scheduled (a decline worth retrying); a resume after that time sends it. */
  retryScheduled: number;
  /** Not sent yet (or not sent because the service could not be reached). */
  pending: number;
  /** True when every item reached a final status (charged, accepted, declined, rejected, needs_review). */
  complete: boolean;
}

export function summaryOf(batchId: string, counts: StatusCounts): BatchSummary {
  const by = counts.byStatus;
  const reasons = (status: ItemStatus) => ({
    total: by[status],
    byReason: { ...(counts.reasons[status] ?? {}) },
  });
  const open = by.pending + by.sending + by.unknown + by.retry_scheduled;
  return {
    batchId,
    total: counts.total,
    charged: by.charged,
    accepted: by.accepted,
    declined: reasons("declined"),
    rejected: reasons("rejected"),
    // `sending` found at the end of a run means a call was cut off: its outcome is unknown too.
    unknown: by.unknown + by.sending,
    needsReview: reasons("needs_review"),
    retryScheduled: by.retry_scheduled,
    pending: by.pending,
    complete: open === 0,
  };
}
