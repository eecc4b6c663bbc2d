import type { ChargeItem } from "../items.js";

// The write-ahead state of a batch: one record per item. Every change of an item is one atomic
// compare-and-set on its `version`, so the outcome of a call is recorded in the same step as the
// status it changes, and two workers can never overwrite each other's news.

/**
 * Where an item stands:
 * - `pending`: no attempt of the current number was sent (`notBefore` may delay it);
 * - `sending`: written ahead (key, request, first-sent time) and maybe sent: its outcome is unknown
 *   until a definite answer about that key arrives (a crash leaves items here);
 * - `unknown`: sent, and no definite answer came yet: resent later with the same key;
 * - `retry_scheduled`: declined with a reason worth retrying; a new attempt (new key) at `notBefore`;
 * - `charged`: authorized synchronously (the service's 200, with an order id);
 * - `accepted`: accepted (202); the service attempts it and the outcome arrives by webhook;
 * - `declined`: declined with a reason not worth retrying, or retries exhausted (`reason`);
 * - `rejected`: refused for another cause (invalid order, unknown token: 400, 404, ...);
 * - `needs_review`: its outcome stayed unknown past the key's idempotency window: never resent.
 */
export type ItemStatus =
  | "pending"
  | "sending"
  | "unknown"
  | "retry_scheduled"
  | "charged"
  | "accepted"
  | "declined"
  | "rejected"
  | "needs_review";

export const OPEN_STATUSES: readonly ItemStatus[] = ["pending", "sending", "unknown", "retry_scheduled"];
export const FINAL_STATUSES: readonly ItemStatus[] = [
  "charged",
  "accepted",
  "declined",
  "rejected",
  "needs_review",
];

export function isOpen(status: ItemStatus): boolean {
  return OPEN_STATUSES.includes(status);
}

/** What the service answered for a successful attempt. */
export interface ChargeResult {
  authorizationId: string;
  /** Present for a synchronous authorization (200). */
  orderId?: string;
  /** The service's response id. */
  requestId: string;
  synchronous: boolean;
}

/** One call about one key, as it ended (kept per item, for review). */
export interface AttemptLogEntry {
  attempt: number;
  idempotencyKey: string;
  /** done, refused, not_sent, unknown; or window_passed when a key was too old to send again. */
  outcome: "done" | "refused" | "not_sent" | "unknown" | "window_passed";
  reason?: string;
  /** The service's response id, when there was a response. */
  requestId?: string;
  at: string;
}

export interface BatchItemRecord {
  batchId: string;
  itemId: string;
  /** Registration order within the store. */
  seq: number;
  /** The item as registered (holds the customer token: never log it). */
  item: ChargeItem;
  status: ItemStatus;
  /** Number of the current (or last) attempt; 0 before the first. Each attempt has its own key. */
  attempt: number;
  /** The key of the current attempt, written before it is sent. */
  idempotencyKey?: string;
  /** The exact serialised request of the current attempt, written before it is sent. */
  request?: string;
  /** When the current attempt's key was first (about to be) sent. */
  firstSentAt?: Date;
  /** Not to be worked on before this time (a scheduled retry or a backoff). */
  notBefore?: Date;
  /** Decline reason, or why it was rejected or needs review. */
  reason?: string;
  result?: ChargeResult;
  log: AttemptLogEntry[];
  version: number;
  updatedAt: Date;
}

/** The fields a transition may change; `log` entries are appended. */
export interface ItemChange {
  status: ItemStatus;
  attempt?: number;
  idempotencyKey?: string | null;
  request?: string | null;
  firstSentAt?: Date | null;
  notBefore?: Date | null;
  reason?: string | null;
  result?: ChargeResult | null;
  appendLog?: AttemptLogEntry;
}

export interface RegisterResult {
  /** Items new to the store. */
  added: number;
  /** Items already registered with the same content (a re-run of the same input). */
  existing: number;
}

/** Counts of a batch's items by status, and declines/rejections by reason. */
export interface StatusCounts {
  total: number;
  byStatus: Record<ItemStatus, number>;
  /** Reasons of `declined`, `rejected` and `needs_review` items, per status. */
  reasons: Partial<Record<ItemStatus, Record<string, number>>>;
}

export interface OpenItemView {
  itemId: string;
  status: ItemStatus;
  notBefore?: Date;
}

/** Where batch state lives: `MemoryBatchStore` (one process) or `PostgresBatchStore`. */
export interface BatchStore {
  /** Creates the tables when the store has any (idempotent). */
  migrate(): Promise<void>;
  /**
   * Registers items (idempotent per batch id + item id). An item id registered before with a
   * different customer token or order throws: one id is one charge.
   */
  register(
    batchId: string,
    items: ReadonlyArray<ChargeItem>,
    invalid?: ReadonlyMap<string, string>,
  ): Promise<RegisterResult>;
  get(batchId: string, itemId: string): Promise<BatchItemRecord | undefined>;
  /** Compare-and-set: applies `change` only if the record still has `version`; else undefined. */
  transition(record: BatchItemRecord, change: ItemChange, now: Date): Promise<BatchItemRecord | undefined>;
  /** Open items due at `now` with seq > `afterSeq`, in seq order, at most `limit`. */
  due(batchId: string, now: Date, afterSeq: number, limit: number): Promise<BatchItemRecord[]>;
  /**
   * Open items, the soonest due first (no `notBefore` first, then seq order), at most `limit`: for
   * deciding whether and how long to wait. The first `limit` are the ones due soonest, so a caller
   * that finds none of them due within its horizon knows none of the rest is either.
   */
  open(batchId: string, limit: number): Promise<OpenItemView[]>;
  counts(batchId: string): Promise<StatusCounts>;
  /** Every item of the batch in seq order, in pages (for reports). */
  items(batchId: string, pageSize?: number): AsyncIterable<BatchItemRecord>;
}

export function emptyCounts(): StatusCounts {
  return {
    total: 0,
    byStatus: {
      pending: 0,
      sending: 0,
      unknown: 0,
      retry_scheduled: 0,
      charged: 0,
      accepted: 0,
      declined: 0,
      rejected: 0,
      needs_review: 0,
    },
    reasons: {},
  };
}

/** Adds `n` items of `status` (and `reason`, its code before any ": detail") to `counts`. */
export function addToCounts(
  counts: StatusCounts,
  status: ItemStatus,
  reason: string | undefined,
  n = 1,
): void {
  counts.total += n;
  counts.byStatus[status] += n;
  if (reason !== undefined && (status === "declined" || status === "rejected" || status === "needs_review")) {
    const byReason = counts.reasons[status] ?? {};
    counts.reasons[status] = byReason;
    // "INVALID_REQUEST: order.items[0].vat must be …" counts as INVALID_REQUEST; the record keeps the detail.
    const key = reason.split(": ")[0]!;
    byReason[key] = (byReason[key] ?? 0) + n;
  }
}
