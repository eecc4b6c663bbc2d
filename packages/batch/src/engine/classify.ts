import {
  AuthenticationError,
  ConfigurationError,
  type CreateAuthorizationResult,
  DeclinedError,
  IdempotencyError,
  IdempotencyWindowPassedError,
  outcomeOf,
  PurchaseAuthError,
  ServiceUnavailableError,
} from "@purchase-auth/core";
import type { AttemptLogEntry, ChargeResult, ItemChange } from "../state/types.js";
import { delayBeforeNextAttempt, type ResolvedDeclinePolicy } from "./decline-policy.js";

// From what one call about one key ended as (core's outcome model) to the item's next state. Pure:
// the decline policy and the resumption rules are tested here without a network.

export interface CallContext {
  attempt: number;
  idempotencyKey: string;
  /** True when this key may have reached the service before this call (a resume or a resend). */
  sentBefore: boolean;
  now: Date;
  /** Delay before the next resend of an unknown outcome. */
  unknownRetryDelayMs: number;
  /** Delay before sending again something that was not sent (service unreachable, rate-limited). */
  notSentRetryDelayMs: number;
}

/** A failure that no item can get past (bad credentials or options): the run stops. */
export class BatchFatalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "BatchFatalError";
  }
}

export function resultOf(created: CreateAuthorizationResult): ChargeResult {
  return {
    authorizationId: created.authorizationId,
    ...(created.orderId === undefined ? {} : { orderId: created.orderId }),
    requestId: created.requestId,
    synchronous: created.synchronous,
  };
}

export function changeForSuccess(created: CreateAuthorizationResult, call: CallContext): ItemChange {
  return {
    status: created.synchronous ? "charged" : "accepted",
    notBefore: null,
    reason: null,
    result: resultOf(created),
    appendLog: logEntry(call, "done", undefined, created.requestId),
  };
}

/** The item's next state after `error`; throws BatchFatalError when no item could succeed. */
export function changeForError(error: unknown, call: CallContext, policy: ResolvedDeclinePolicy): ItemChange {
  const requestId = PurchaseAuthError.isInstance(error) ? error.requestId : undefined;

  if (IdempotencyWindowPassedError.isInstance(error) || IdempotencyError.isInstance(error)) {
    // The key is too old to be sent again (or the service no longer knows it) and its fate is
    // unknown: never resent, never replaced by a new key; a person decides.
    const reason = IdempotencyError.isInstance(error)
      ? (error.reason ?? "IDEMPOTENCY_ERROR")
      : "IDEMPOTENCY_WINDOW_PASSED";
    return {
      status: "needs_review",
      notBefore: null,
      reason,
      appendLog: logEntry(call, "window_passed", reason, requestId),
    };
  }

  const outcome = outcomeOf(error);
  // Anything but a definite answer about a key that may have been sent stays unknown: resent later
  // with the same key (a 429 or an unreachable service says nothing about the earlier send).
  const mayHaveHappened =
    outcome === "unknown" ||
    (call.sentBefore && (outcome === "not_sent" || ServiceUnavailableError.isInstance(error)));
  if (mayHaveHappened) {
    return {
      status: "unknown",
      notBefore: new Date(call.now.getTime() + call.unknownRetryDelayMs),
      appendLog: logEntry(call, "unknown", reasonOf(error), requestId),
    };
  }

  if (ConfigurationError.isInstance(error) || AuthenticationError.isInstance(error)) {
    throw new BatchFatalError(`The batch cannot run: ${(error as Error).message}`, { cause: error });
  }

  if (outcome === "not_sent" || ServiceUnavailableError.isInstance(error)) {
    if (PurchaseAuthError.isInstance(error) && error.retry === "no") {
      // A ValidationError: this request can never be sent.
      return {
        status: "rejected",
        notBefore: null,
        reason: reasonOf(error) ?? "INVALID_REQUEST",
        appendLog: logEntry(call, "not_sent", reasonOf(error)),
      };
    }
    // Nothing reached the service with this key (or it refused to look, 429): the same attempt,
    // with the same key, later.
    return {
      status: "pending",
      notBefore: new Date(call.now.getTime() + call.notSentRetryDelayMs),
      appendLog: logEntry(call, outcome === "not_sent" ? "not_sent" : "refused", reasonOf(error), requestId),
    };
  }

  // refused: a definite answer about this key.
  const reason = reasonOf(error) ?? "REFUSED";
  if (DeclinedError.isInstance(error)) {
    const delay = error.retry === "new-attempt" ? delayBeforeNextAttempt(policy, call.attempt) : undefined;
    if (delay !== undefined) {
      return {
        status: "retry_scheduled",
        notBefore: new Date(call.now.getTime() + delay),
        reason,
        appendLog: logEntry(call, "refused", reason, requestId),
      };
    }
    return {
      status: "declined",
      notBefore: null,
      reason,
      appendLog: logEntry(call, "refused", reason, requestId),
    };
  }
  return {
    status: "rejected",
    notBefore: null,
    reason,
    appendLog: logEntry(call, "refused", reason, requestId),
  };
}

/** The reason to report: the service's reason, else the error's kind ("NotFoundError", ...). */
function reasonOf(error: unknown): string | undefined {
  if (PurchaseAuthError.isInstance(error)) return error.reason ?? error.name;
  return error instanceof Error ? error.name : undefined;
}

function logEntry(
  call: CallContext,
  outcome: AttemptLogEntry["outcome"],
  reason?: string,
  requestId?: string,
): AttemptLogEntry {
  return {
    attempt: call.attempt,
    idempotencyKey: call.idempotencyKey,
    outcome,
    ...(reason === undefined ? {} : { reason }),
    ...(requestId === undefined ? {} : { requestId }),
    at: call.now.toISOString(),
  };
}
