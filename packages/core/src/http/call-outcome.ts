import {
  AbortedError,
  IdempotencyError,
  IdempotencyWindowPassedError,
  OutcomeUnknownError,
  type PurchaseAuthError,
  ServiceUnavailableError,
  type UnknownWrite,
  type WriteOperation,
} from "../errors/errors.js";
import { type AttemptFailure, describeFailure } from "./attempt-failure.js";

// The error a call ends with, by the outcome model: once an attempt may have taken effect (in this
// call, or in an earlier one that sent the same key), only a definite answer from the service about
// that key is anything but an OutcomeUnknownError.

/** What the executor needs to know of a call to describe how it ended. */
export interface CallDescription {
  method: "GET" | "POST" | "DELETE";
  path: string;
  body?: string;
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** This call's own deadline (`RequestOptions.deadlineMs`), within the client's. */
  deadlineMs?: number;
  operation: string;
  /** Set on writes: the operation an unknown outcome's record names. */
  write?: WriteOperation;
}

export interface CallState {
  /** When this key was first sent (by this call, or by an earlier one the caller told us of). */
  firstSentAt: Date | undefined;
  /** True once an attempt with this key may have reached the service and we did not see its effect. */
  mayHaveTakenEffect: boolean;
}

/** True when the call's outcome is unknown if it ends now without a definite answer about the key. */
function isUncertainWrite(call: CallDescription, state: CallState): boolean {
  return state.mayHaveTakenEffect && call.write !== undefined && call.idempotencyKey !== undefined;
}

/** The error for a write that may or may not have taken effect: repeat it with the same key. */
export function unknownOutcome(
  call: CallDescription,
  state: CallState,
  why: string,
  cause: unknown,
  nowMs: number,
): OutcomeUnknownError {
  const write: UnknownWrite = {
    operation: call.write ?? "authorizations.create",
    method: call.method === "DELETE" ? "DELETE" : "POST",
    path: call.path,
    ...(call.body === undefined ? {} : { body: call.body }),
    idempotencyKey: call.idempotencyKey!,
    firstSentAt: (state.firstSentAt ?? new Date(nowMs)).toISOString(),
  };
  return new OutcomeUnknownError(
    `${call.operation}: outcome unknown (an attempt may have reached the service, ${why}); repeat with the same idempotency key`,
    { write, ...(cause === undefined ? {} : { cause }) },
  );
}

/** A key that must not be sent again: the service may already have forgotten it. */
export function windowPassed(
  call: CallDescription,
  firstSentAt: Date,
  cause?: unknown,
): IdempotencyWindowPassedError {
  return new IdempotencyWindowPassedError(
    `${call.operation}: this idempotency key was first sent at ${firstSentAt.toISOString()}, past the service's idempotency window; it is not sent again (it could charge twice). Look the write up at the service.`,
    { idempotencyKey: call.idempotencyKey!, firstSentAt, ...(cause === undefined ? {} : { cause }) },
  );
}

/**
 * IDEMPOTENCY_RESPONSE_EXPIRED: the service stored a response for this key over its replay window
 * ago, so whatever that request did stays unknown. When nothing of ours with this key may have taken
 * effect before this answer, this call was the first we know of: the key was used by someone else
 * (another process, a restart), and the message must not claim an earlier send of ours.
 */
function responseExpired(
  call: CallDescription,
  state: CallState,
  error: PurchaseAuthError,
  nowMs: number,
): IdempotencyWindowPassedError {
  const firstSentAt = state.firstSentAt ?? new Date(nowMs);
  // The service's answer stays on the error: its reason and request id, for support.
  const answer = { status: error.status, requestId: error.requestId, reasons: error.reasons, cause: error };
  if (state.mayHaveTakenEffect) {
    return new IdempotencyWindowPassedError(
      `${call.operation}: the service answered IDEMPOTENCY_RESPONSE_EXPIRED: this idempotency key was first sent at ${firstSentAt.toISOString()}, past the service's idempotency window; it is not sent again (it could charge twice). Look the write up at the service.`,
      { idempotencyKey: call.idempotencyKey!, firstSentAt, ...answer },
    );
  }
  return new IdempotencyWindowPassedError(
    `${call.operation}: the service answered IDEMPOTENCY_RESPONSE_EXPIRED: its stored response for this idempotency key has expired, so the key was used before (possibly by another process) and what that request did is unknown. The key is not sent again (it could charge twice). Look the write up at the service.`,
    { idempotencyKey: call.idempotencyKey!, firstSentAt, ...answer },
  );
}

/** A key said to be first sent later than now: its age, so its window, cannot be told. */
export function firstSentInFuture(
  call: CallDescription,
  firstSentAt: Date,
  nowMs: number,
): IdempotencyWindowPassedError {
  return new IdempotencyWindowPassedError(
    `${call.operation}: firstSentAt (${firstSentAt.toISOString()}) is later than this client's clock (${new Date(nowMs).toISOString()}), so how long ago this idempotency key was sent cannot be told; it is not sent again (it could charge twice). Look the write up at the service.`,
    { idempotencyKey: call.idempotencyKey ?? "", firstSentAt },
  );
}

/** The caller's abort: AbortedError when nothing of the write can have taken effect, unknown otherwise. */
export function abortedOutcome(call: CallDescription, state: CallState, nowMs: number): PurchaseAuthError {
  const reason = call.signal?.reason;
  if (isUncertainWrite(call, state))
    return unknownOutcome(call, state, "then the caller aborted", reason, nowMs);
  return new AbortedError(`${call.operation}: aborted by the caller before anything was sent`, {
    cause: reason,
    ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
  });
}

/**
 * A definite answer: the error as it is, unless it cannot be about what an earlier uncertain attempt
 * did (not the service's envelope, or a status this client does not know), or says the key's stored
 * answer is gone (IDEMPOTENCY_RESPONSE_EXPIRED: whatever the key did stays unknown).
 */
export function definiteOutcome(
  call: CallDescription,
  state: CallState,
  error: PurchaseAuthError,
  fromService: boolean,
  nowMs: number,
): PurchaseAuthError {
  if (call.write === undefined) return error;
  if (IdempotencyError.isInstance(error) && error.reason === "IDEMPOTENCY_RESPONSE_EXPIRED") {
    return responseExpired(call, state, error, nowMs);
  }
  if (isUncertainWrite(call, state) && !isAboutTheKey(error, fromService)) {
    return unknownOutcome(call, state, `then HTTP ${error.status}`, error, nowMs);
  }
  return error;
}

/** The service's own definite answer, which it stores under the key: it is about the key. */
export function isAboutTheKey(error: PurchaseAuthError, fromService: boolean): boolean {
  return fromService && error.name !== "UnexpectedResponseError";
}

/** A refusal that says nothing about the key (a 401, a token endpoint refusing our credentials). */
export function refusalOutcome(
  call: CallDescription,
  state: CallState,
  error: PurchaseAuthError,
  why: string,
  nowMs: number,
): PurchaseAuthError {
  return isUncertainWrite(call, state) ? unknownOutcome(call, state, why, error, nowMs) : error;
}

/** The error for a call whose retries or deadline ran out with `last` as its last failure. */
export function gaveUpOutcome(
  call: CallDescription,
  state: CallState,
  last: AttemptFailure,
  nowMs: number,
): PurchaseAuthError {
  const cause = "error" in last ? last.error : undefined;
  const why = describeFailure(last);
  if (isUncertainWrite(call, state)) return unknownOutcome(call, state, why, cause, nowMs);
  const rateLimited = last.kind === "http" && last.response.status === 429;
  return new ServiceUnavailableError(
    rateLimited
      ? `${call.operation}: rate-limited (HTTP 429) until the deadline or the retries ran out; this call charged or changed nothing, try again later`
      : `${call.operation}: the service could not be reached (${why}); this call charged or changed nothing, try again later`,
    {
      // An answer (429 on a write; any answer on a read, which changes nothing) is a refusal.
      outcome: last.kind === "http" ? "refused" : "not_sent",
      ...(last.kind === "http" ? { status: last.response.status } : {}),
      ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
      ...(cause === undefined ? {} : { cause }),
    },
  );
}
