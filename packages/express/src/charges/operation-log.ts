import type {
  ChargeRecord,
  MerchantOperation,
  OperationRecord,
  PendingAuthorization,
} from "../stores/types.js";

// The operation log of a charge's merchant writes (capture, cancel, refund): one entry per
// operation and sequence, written before the write is first sent and moved forward only.

/**
 * News of one merchant write: recorded before it is first sent (state "sent"), before each later
 * send (`sending`), or how a send ended. The counted sequence moves up to it, and with a
 * fingerprint its entry in the operation log is written.
 */
export interface OperationNews {
  kind: "operation";
  operation: MerchantOperation;
  sequence: number | string;
  fingerprint?: string;
  state?: OperationRecord["state"];
  /**
   * When this was learnt: the entry's `firstSentAt` when it creates the entry (its first send
   * follows), its `lastSentAt` with `sending`.
   */
  at?: string;
  /** The amount it moves, recorded with it so the reconciler can send it again (kept from the first entry). */
  amount?: string;
  /** Recorded just before a later send of an existing entry: one more send, and `lastSentAt` = `at`. */
  sending?: true;
  /** A send that core says never reached the service (outcome `not_sent`) ended. */
  notDelivered?: true;
}

/** A record that counts a write's sends: a merchant write's log entry, a charge's create call. */
type SendCounts = OperationRecord | PendingAuthorization;

/**
 * True while a send may have reached the service: some send began (counted before it went out, so a
 * crash mid-send counts) that core did not report as not delivered. A record stored before sends
 * were counted is taken to have reached it (one send, none undelivered).
 */
export function mayHaveReached(entry: SendCounts): boolean {
  return (entry.sends ?? 1) > (entry.undelivered ?? 0);
}

/**
 * True when a send before the record's last one may have reached the service: for a send the record
 * has just counted (its stored change, made before it goes out), whether an earlier send may have.
 */
export function mayHaveReachedBefore(entry: SendCounts): boolean {
  return (entry.sends ?? 1) - 1 > (entry.undelivered ?? 0);
}

/**
 * When a send of the entry last began, as far as the record tells: its `lastSentAt`, else its
 * first send, else (an entry stored before either was recorded) the charge's last change.
 */
export function lastSendOf(entry: OperationRecord, charge: ChargeRecord): number {
  return Date.parse(entry.lastSentAt ?? entry.firstSentAt ?? charge.updatedAt);
}

/** Moves the counted sequence up to a numbered write, and writes the log entry of a fingerprinted one. */
export function recordOperation(next: ChargeRecord, news: OperationNews): void {
  if (typeof news.sequence === "number") {
    next.operations[news.operation] = Math.max(next.operations[news.operation], news.sequence);
  }
  if (news.fingerprint === undefined) return;
  const id = operationId(news.operation, news.sequence);
  const known = next.operationLog?.[id];
  // An entry only moves forward (sent → done, refused or unconfirmed; unconfirmed → done or refused,
  // when a request that sent it inside the window learns its answer late), and never changes what
  // it moves. Its counts of sends only grow.
  if (
    known !== undefined &&
    (known.fingerprint !== news.fingerprint || !movesForward(known.state, news.state))
  )
    return;
  const entry: OperationRecord = {
    operation: news.operation,
    sequence: news.sequence,
    fingerprint: news.fingerprint,
    state: news.state ?? "sent",
  };
  // Its first recording's time, never a later one: the key's window started then.
  const firstSentAt = known === undefined ? news.at : known.firstSentAt;
  if (firstSentAt !== undefined) entry.firstSentAt = firstSentAt;
  const amount = known === undefined ? news.amount : known.amount;
  if (amount !== undefined) entry.amount = amount;
  // An entry is created just before its first send; a later send is recorded before it goes out.
  let sends = known === undefined ? 1 : known.sends;
  let lastSentAt = known === undefined ? news.at : known.lastSentAt;
  if (known !== undefined && news.sending) {
    sends = (known.sends ?? 1) + 1;
    lastSentAt = news.at ?? lastSentAt;
  }
  if (sends !== undefined) entry.sends = sends;
  if (lastSentAt !== undefined) entry.lastSentAt = lastSentAt;
  const undelivered = (known?.undelivered ?? 0) + (known !== undefined && news.notDelivered ? 1 : 0);
  if (undelivered > 0) entry.undelivered = undelivered;
  next.operationLog = { ...next.operationLog, [id]: entry };
}

function movesForward(from: OperationRecord["state"], to: OperationRecord["state"] | undefined): boolean {
  if (from === "sent") return true;
  return from === "unconfirmed" && (to === "done" || to === "refused");
}

/** The operation log's key of one merchant write. */
export function operationId(operation: MerchantOperation, sequence: number | string): string {
  return `${operation}:${sequence}`;
}

/** True when both logs hold the same entries in the same states, with the same sends counted. */
export function sameOperationLog(a: ChargeRecord["operationLog"], b: ChargeRecord["operationLog"]): boolean {
  if (a === b) return true;
  const aKeys = Object.keys(a ?? {});
  if (aKeys.length !== Object.keys(b ?? {}).length) return false;
  return aKeys.every((key) => {
    const x = a?.[key];
    const y = b?.[key];
    return (
      x?.state === y?.state &&
      x?.sends === y?.sends &&
      x?.undelivered === y?.undelivered &&
      x?.lastSentAt === y?.lastSentAt
    );
  });
}
