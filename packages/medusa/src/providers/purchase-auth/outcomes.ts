import { isUncertain } from "./errors";

// Core's outcome model (issue 10): every failed write is "refused", "not_sent" or "unknown", and
// says what to do next ("same-key", "new-attempt", "no"). This file is the one place the provider
// reads it, so the rest never looks at error classes or statuses to decide.

export type ErrorOutcome = "refused" | "not_sent" | "unknown";
export type RetryAdvice = "same-key" | "new-attempt" | "no";

interface OutcomeFields {
  outcome?: unknown;
  retry?: unknown;
  retryable?: unknown;
  firstSentAt?: unknown;
}

/** What a failed write means: nothing done (refused / not sent), or perhaps done (unknown). */
export function outcomeOfError(error: unknown): ErrorOutcome {
  const fields = (error ?? {}) as OutcomeFields;
  if (fields.outcome === "refused" || fields.outcome === "not_sent" || fields.outcome === "unknown") {
    return fields.outcome;
  }
  // Core before the outcome model: the provider's own reading of its error classes.
  return isUncertain(error) ? "unknown" : "refused";
}

/** What core advises after a failed write. */
export function retryAdviceOf(error: unknown): RetryAdvice {
  const fields = (error ?? {}) as OutcomeFields;
  if (fields.retry === "same-key" || fields.retry === "new-attempt" || fields.retry === "no") {
    return fields.retry;
  }
  if (outcomeOfError(error) === "unknown") return "same-key";
  return fields.retryable === true ? "new-attempt" : "no";
}

/** When the unknown write's key was first sent (core's OutcomeUnknownError.firstSentAt). */
export function firstSentAtOf(error: unknown): Date | undefined {
  const value = ((error ?? {}) as OutcomeFields).firstSentAt;
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value : undefined;
}

/** True for core's IdempotencyWindowPassedError: the key is too old to be sent again. */
export function isWindowPassed(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === "IdempotencyWindowPassedError";
}
