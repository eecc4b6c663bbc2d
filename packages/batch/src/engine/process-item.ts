import type {
  AuthorizationRequest,
  AuthorizationRequestInput,
  CreateAuthorizationResult,
  WriteOptions,
} from "@purchase-auth/core";
import { requestOf } from "../items.js";
import { batchChargeKey } from "../keys.js";
import { type BatchItemRecord, type BatchStore, type ItemChange, isOpen } from "../state/types.js";
import { BatchFatalError, type CallContext, changeForError, changeForSuccess } from "./classify.js";
import type { ResolvedDeclinePolicy } from "./decline-policy.js";

/** What the engine needs of core's `PurchaseAuthClient` (a real client fits). */
export interface ChargeClient {
  authorizations: {
    create(
      request: AuthorizationRequestInput | AuthorizationRequest,
      options?: WriteOptions,
    ): Promise<CreateAuthorizationResult>;
  };
}

export interface Engine {
  client: ChargeClient;
  store: BatchStore;
  policy: ResolvedDeclinePolicy;
  keyNamespace: string | undefined;
  now: () => Date;
  unknownRetryDelayMs: number;
  notSentRetryDelayMs: number;
  signal: AbortSignal | undefined;
  /** Awaited before an item's request is written ahead and sent (the rate limiter waits here). */
  beforeSend?: () => Promise<void>;
}

export interface StepOutcome {
  /** The item after this step; undefined when another worker changed it meanwhile. */
  record: BatchItemRecord | undefined;
  /** Whether a request may have gone out (not when core refused to send it). */
  sent: boolean;
}

/**
 * One step of one item, the unit of work of every runner:
 * - `pending` / `retry_scheduled`: derive the attempt's key, WRITE AHEAD (status `sending`, key,
 *   exact request, first-sent time) and only then send;
 * - `sending` / `unknown` (a crash or an unknown outcome): send the stored request again with the
 *   stored key and first-sent time: core refuses (IdempotencyWindowPassedError, nothing sent) once
 *   the key's window has passed, and the item becomes `needs_review`;
 * then store what came back in one compare-and-set with the new status.
 */
export async function processItem(engine: Engine, record: BatchItemRecord): Promise<StepOutcome> {
  if (!isOpen(record.status) || (record.notBefore !== undefined && record.notBefore > engine.now())) {
    return { record, sent: false };
  }
  // Waits for the rate limiter before writing ahead, so the first-sent time is the sending time.
  await engine.beforeSend?.();
  const now = engine.now();

  let sendRecord: BatchItemRecord;
  let request: AuthorizationRequestInput | AuthorizationRequest;
  const resuming = record.status === "sending" || record.status === "unknown";
  if (resuming) {
    if (
      record.idempotencyKey === undefined ||
      record.request === undefined ||
      record.firstSentAt === undefined
    ) {
      throw new Error(
        `Batch ${record.batchId}: item ${record.itemId} is ${record.status} without its write-ahead record`,
      );
    }
    sendRecord = record;
    request = JSON.parse(record.request) as AuthorizationRequestInput;
  } else {
    // `pending` keeps its attempt number (nothing with its key reached the service); a scheduled
    // retry is a new attempt with a new key.
    const attempt =
      record.status === "retry_scheduled" || record.attempt === 0 ? record.attempt + 1 : record.attempt;
    const built = requestOf(record.item, engine.policy.defaultSchedule);
    if ("invalid" in built) {
      const rejected = await engine.store.transition(
        record,
        { status: "rejected", reason: `INVALID_REQUEST: ${built.invalid}`, notBefore: null },
        now,
      );
      return { record: rejected, sent: false };
    }
    const key = batchChargeKey(
      record.batchId,
      record.itemId,
      record.item.customerToken,
      attempt,
      engine.keyNamespace,
    );
    const written = await engine.store.transition(
      record,
      {
        status: "sending",
        attempt,
        idempotencyKey: key,
        request: JSON.stringify(built.request),
        firstSentAt: now,
        notBefore: null,
      },
      now,
    );
    if (written === undefined) return { record: undefined, sent: false };
    sendRecord = written;
    request = built.request;
  }

  const key = sendRecord.idempotencyKey!;
  const options: WriteOptions = {
    idempotencyKey: key,
    ...(resuming ? { firstSentAt: sendRecord.firstSentAt! } : {}),
    ...(engine.signal === undefined ? {} : { signal: engine.signal }),
  };
  let change: ItemChange;
  const call = (at: Date): CallContext => ({
    attempt: sendRecord.attempt,
    idempotencyKey: key,
    sentBefore: resuming,
    now: at,
    unknownRetryDelayMs: engine.unknownRetryDelayMs,
    notSentRetryDelayMs: engine.notSentRetryDelayMs,
  });
  try {
    const created = await engine.client.authorizations.create(request, options);
    change = changeForSuccess(created, call(engine.now()));
  } catch (error) {
    try {
      change = changeForError(error, call(engine.now()), engine.policy);
    } catch (fatal) {
      if (fatal instanceof BatchFatalError && !resuming) {
        // A fatal error is never an uncertain one (those stay unknown): nothing took effect with the
        // key written ahead (not sent, or refused before the key was looked at, as a 401 is), so
        // the item goes back to waiting for it instead of being reported unknown.
        await engine.store.transition(sendRecord, { status: "pending" }, engine.now());
      }
      throw fatal;
    }
  }
  const stored =
    (await engine.store.transition(sendRecord, change, engine.now())) ??
    (await applyToNewerVersion(engine, sendRecord, change));
  // Core refused to send (an expired key, the service unreachable): no request went out.
  const sent = change.appendLog?.outcome !== "window_passed" && change.appendLog?.outcome !== "not_sent";
  return { record: stored ?? (await engine.store.get(record.batchId, record.itemId)), sent };
}

/**
 * Another worker moved the item on while this one's call was out (a duplicate job that resent the
 * same key). What this call learnt about that same key must not be thrown away:
 * - a definite answer (charged, accepted, declined, rejected, a retry scheduled) is applied as long
 *   as the item is still open on that key (`pending`, `sending`, `unknown`), or `needs_review`
 *   because the duplicate could not learn that key's outcome;
 * - an unknown outcome is applied over `pending` or `sending` (the duplicate's own send was not
 *   sent, or is out again, but this one may have reached the service: the key must be resent as
 *   what it is, a resend, and its first-sent time kept);
 * - `needs_review` (the key's window passed) over `pending`, `sending` or `unknown`;
 * - "not sent" never: the newer version knows at least as much.
 * The first-sent time never moves later than this call's (the earliest known send of the key).
 */
async function applyToNewerVersion(
  engine: Engine,
  sent: BatchItemRecord,
  change: ItemChange,
): Promise<BatchItemRecord | undefined> {
  if (change.status === "pending") return undefined;
  for (let tries = 0; tries < 5; tries++) {
    const current = await engine.store.get(sent.batchId, sent.itemId);
    if (
      current === undefined ||
      current.idempotencyKey !== sent.idempotencyKey ||
      current.attempt !== sent.attempt ||
      !appliesTo(current.status, change.status)
    ) {
      return undefined;
    }
    const earlier =
      sent.firstSentAt !== undefined &&
      (current.firstSentAt === undefined || sent.firstSentAt < current.firstSentAt);
    const stored = await engine.store.transition(
      current,
      earlier ? { ...change, firstSentAt: sent.firstSentAt! } : change,
      engine.now(),
    );
    if (stored !== undefined) return stored;
  }
  return undefined;
}

/** Whether this call's `news` about a key is applied to a newer version, in `status`, of the same key. */
function appliesTo(status: ItemChange["status"], news: ItemChange["status"]): boolean {
  if (news === "unknown") return status === "pending" || status === "sending";
  if (news === "needs_review") return status === "pending" || status === "sending" || status === "unknown";
  return status === "pending" || status === "sending" || status === "unknown" || status === "needs_review";
}
