import type { AuthorizationRequest, CaptureMode, WebhookEvent } from "@purchase-auth/core";

// The contract every charge store keeps. The router only ever talks to a store through this
// interface, and the same contract test suite runs against each implementation.

/**
 * Where a charge stands. `pending` until the service's outcome is known; then the order's life
 * (authorized → captured → refunded, or cancelled/expired), or `failed` with a reason.
 */
export type ChargeStatus =
  | "pending"
  | "authorized"
  | "partially_captured"
  | "captured"
  | "partially_refunded"
  | "refunded"
  | "cancelled"
  | "expired"
  | "failed"
  /**
   * Nobody can tell any more whether the attempt charged: its create call's outcome stayed unknown
   * past the service's idempotency window, so its key may never be sent again. An operator must
   * look at the service (by the order reference); a webhook that arrives later still moves it on.
   */
  | "needs_review";

/** The writes a merchant can make to a charge's order. */
export type MerchantOperation = "capture" | "cancel" | "refund";

/**
 * The create call of the current attempt, recorded before it is first sent (write-ahead): the
 * reconciler re-sends exactly this with exactly this key while the service's idempotency window
 * lasts, also from another process after a crash.
 */
export interface PendingAuthorization {
  /** The attempt's idempotency key (bound to the reference, the customer token and the attempt). */
  idempotencyKey: string;
  /** The checked request, as sent. */
  request: AuthorizationRequest;
  /** When the key was first sent (ISO 8601); after the idempotency window it is never sent again. */
  firstSentAt: string;
  /**
   * Sends of this key begun, each counted in the stored change made before it goes out: the
   * write-ahead record counts the first (a crash mid-send still counts), a resend (a repeated
   * request, the reconciler, another instance) is counted on the same unanswered attempt by
   * compare-and-set. Absent on records stored before sends were counted (taken as one).
   */
  sends?: number;
  /**
   * Of those, the sends that core says did nothing (outcome `not_sent` or `refused`, other than the
   * service's definite answers that fail the attempt anyway). The stored change that makes it equal
   * to `sends` also moves the charge to `failed` (reason `SERVICE_UNAVAILABLE`): no send can have
   * reached the service, so the shopper told "nothing happened" starts a new attempt, and the
   * reconciler never sends it. While it is less, a send may have reached the service: the charge
   * stays pending, and is resent with its key. Absent: none.
   */
  undelivered?: number;
}

/** One merchant write as recorded before it is sent: its name, what it moves, and how it ended. */
export interface OperationRecord {
  operation: MerchantOperation;
  /** The caller's sequence (a number or its own id). */
  sequence: number | string;
  /** A hash of what the write moves (amount or "all"): the same sequence with another body is a conflict. */
  fingerprint: string;
  /**
   * sent: recorded, answer unknown (the reconciler sends it again inside the window if a send may
   * have reached the service, or settles it after); done: the service's order shows it; refused: the service said no (or, for a write
   * without an amount past the window, the order shows it was not applied: its key is never sent
   * again); unconfirmed: its answer stayed unknown past the service's idempotency window, so its key is
   * never sent again (an operator compares the order at the service).
   */
  state: "sent" | "done" | "refused" | "unconfirmed";
  /**
   * When it was recorded, before its first send (ISO 8601): a key is sent again only inside the
   * window the service remembers it. Absent on entries stored before it existed; those are never
   * sent again.
   */
  firstSentAt?: string;
  /**
   * The amount a partial capture or a refund moves, exactly as sent: the reconciler sends the write
   * again with it. Absent for a write without an amount, and on entries stored before it existed
   * (those are settled by the reconciler only once their window has passed).
   */
  amount?: string;
  /**
   * Sends of it begun, each counted in the stored change made before it goes out (a crash mid-send
   * still counts). Absent on entries stored before sends were counted (taken as one).
   */
  sends?: number;
  /**
   * Of those, the sends that core says did nothing: any error whose outcome is not `unknown` other
   * than the service's refusal of the order's state or of the request (which is recorded on the
   * entry instead): `not_sent` (the token endpoint or the service unreachable before a byte went
   * out, the send aborted before it began) and `refused` (429 on every try, 401/403/404, an
   * unexpected answer). Such a send is answered as core's error maps (503 `service-unavailable`
   * for `not_sent` and 429, 502 `payments-unavailable` for the others) only while no earlier send
   * may have reached the service; after one that may have, 503 `payment-confirming`. While every send is one of them, nothing can have been applied: the
   * reconciler never sends such an entry, and past the window settles it `refused` (not applied)
   * without an alert.
   */
  undelivered?: number;
  /**
   * When its last send began (ISO 8601), recorded before that send: until `timeoutMs` after it, a
   * send may still be on its way, so nobody decides the write was not applied.
   */
  lastSentAt?: string;
}

/** One charge: the authorization of one order reference (the latest attempt at it). */
export interface ChargeRecord {
  /** The app's order reference; the charge's primary key and the root of its idempotency keys. */
  reference: string;
  /** The app's customer the charge belongs to (only they may read it). */
  customerId: string;
  /** Authorization attempt number, part of the idempotency key; grows only after a definite failure. */
  attempt: number;
  /** Known once the service answered (200/202) or a webhook named it. Unique across charges. */
  authorizationId?: string;
  /**
   * The authorization ids of earlier attempts of this reference, and of authorizations the
   * service reported for it that were never this charge's (oldest first). Their news and webhooks
   * never apply to the current attempt, nor to a later one.
   */
  previousAuthorizationIds?: string[];
  /** Known once the authorization succeeded. */
  orderId?: string;
  status: ChargeStatus;
  /** Why it failed (an error reason of the specification), or the reason of the last retry. */
  reason?: string;
  /** Total charged, a decimal string computed from the server-built order ("120.50"). */
  amount: string;
  currency: string;
  captureMode: CaptureMode;
  /**
   * A hash of the order as built for the current attempt (amount, currency, capture mode, items):
   * a repeated POST whose rebuilt order differs is refused. Absent on charges stored before it existed.
   */
  orderFingerprint?: string;
  /**
   * Merchant writes per operation: the highest sequence number recorded (reserved before sending),
   * so the next counted sequence is this + 1 even when a crash lost the answer.
   */
  operations: Record<MerchantOperation, number>;
  /**
   * The current attempt's create call, recorded before it was first sent. Dropped once the
   * attempt's authorization succeeded (authorized or any later status): it is never sent again.
   */
  pendingAuthorization?: PendingAuthorization;
  /** Merchant writes of this attempt, by `${operation}:${sequence}`, recorded before they are sent. */
  operationLog?: Record<string, OperationRecord>;
  /** Grows by one with every stored change; compare-and-set compares it. */
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** A place in the order `listPending` lists pending charges in: just after this charge. */
export interface PendingCursor {
  updatedAt: string;
  reference: string;
}

/** A verified webhook event as stored for deduplication and for later application. */
export interface StoredWebhookEvent {
  id: string;
  /** The authorization the event is about, when it is about one. */
  authorizationId?: string;
  event: WebhookEvent;
  receivedAt: string;
}

export interface ChargeStore {
  /**
   * Stores `charge` unless a charge with its reference exists. Returns the stored charge and whether
   * this call created it: of two concurrent calls for one reference exactly one creates.
   */
  create(charge: ChargeRecord): Promise<{ charge: ChargeRecord; created: boolean }>;

  findByReference(reference: string): Promise<ChargeRecord | undefined>;

  findByAuthorizationId(authorizationId: string): Promise<ChargeRecord | undefined>;

  /**
   * Replaces the charge of `next.reference` with `next` if its stored version is still
   * `expectedVersion` (compare-and-set). Returns the stored charge, or undefined when another writer
   * changed it first (read it again, recompute, retry). `next.version` must be `expectedVersion + 1`.
   * Throws when the move is backwards (see `isForwardMove`) or `next.authorizationId` belongs to
   * another charge: those are bugs, never races.
   */
  compareAndSet(expectedVersion: number, next: ChargeRecord): Promise<ChargeRecord | undefined>;

  /**
   * Stores a verified webhook event unless its id is known. `alreadyApplied` is true only when an
   * event with this id was stored before and marked applied: a duplicate to acknowledge and skip.
   */
  recordEvent(event: StoredWebhookEvent): Promise<{ alreadyApplied: boolean }>;

  /** Marks an event applied, after its change is stored. */
  markEventApplied(eventId: string): Promise<void>;

  /**
   * Events about `authorizationId` stored but not applied yet, oldest first: they arrived before the
   * charge learnt its authorization id (a webhook can outrun the answer to the create call).
   */
  unappliedEvents(authorizationId: string): Promise<StoredWebhookEvent[]>;

  /**
   * Charges whose outcome is still open (status `pending`), least recently written first (by
   * `updatedAt`, then `reference`), at most `limit`; with `after`, only those that come after it in
   * that order. The reconciler pages through them all, so the oldest (accepted charges waiting days
   * for their schedule) cannot hide a newer one whose lost answer must be resent within the hour.
   * Optional for stores written before it existed: without it, nothing is reconciled in the
   * background (the router warns once); a store that ignores `after` is swept one page deep.
   */
  listPending?(limit: number, after?: PendingCursor): Promise<ChargeRecord[]>;

  /**
   * The pending charges whose create call has no known answer (no authorization id): those whose
   * key must be resent within the service's idempotency window. In the order and with the paging of
   * `listPending`. The reconciler looks at these first on every pass, so they are reached in time
   * however many accepted charges wait for their schedule. Optional: without it they are reached by
   * the sweep of `listPending`, one pass per 2,000 pending charges.
   */
  listUnanswered?(limit: number, after?: PendingCursor): Promise<ChargeRecord[]>;

  /**
   * Charges whose operation log holds a merchant write still `sent` (recorded before it was sent,
   * its answer never learnt), whatever their status, in the order and with the paging of
   * `listPending`. The reconciler sends each again with its key inside the service's idempotency
   * window, and settles it past the window (from the order, or `unconfirmed` with an alert).
   * Optional: without it, such a write stays `sent` until the back office sends it again.
   */
  listSentWrites?(limit: number, after?: PendingCursor): Promise<ChargeRecord[]>;

  /**
   * Charges past `pending` that know their authorization id while events about it are stored
   * unapplied, in order of reference after `afterReference`, at most `limit` (the reconciler pages
   * through them, so charges whose events keep failing cannot hide the others). A crash between
   * recording the id and applying the events that arrived first leaves exactly that: an authorized
   * charge whose `order.captured` was acknowledged, so the service never sends it again. Optional,
   * like `listPending`.
   */
  listWithUnappliedEvents?(limit: number, afterReference?: string): Promise<ChargeRecord[]>;
}
