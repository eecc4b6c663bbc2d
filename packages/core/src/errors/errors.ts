import { type ErrorReasonInfo, errorReasonInfo } from "../schemas/error-reasons.js";
import type { ValidationIssue } from "../validation/issues.js";

// One error hierarchy for everything the client can throw. Checks work with `instanceof` and, across
// two copies of this package in one install, with the static `isInstance` (a Symbol.for marker).

const MARKER = Symbol.for("@purchase-auth/core.error");

/** The kind stored under the marker, or undefined for anything that is not one of our errors. */
function kindOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const kind = (value as Record<symbol, unknown>)[MARKER];
  return typeof kind === "string" ? kind : undefined;
}

/**
 * How a write ended, when it did not end done: `refused` (a definite answer that nothing was done
 * for this key), `not_sent` (nothing can have reached the service), `unknown` (an attempt may have
 * reached it and no definite answer about the key came: always an OutcomeUnknownError).
 */
export type FailedOutcome = "refused" | "not_sent" | "unknown";

/** Every write ends as one of these; `done` is a resolved call. */
export type WriteOutcome = "done" | FailedOutcome;

/**
 * What to do after an error:
 * - `same-key`: only on an unknown outcome. Repeat the same request with the same idempotency key
 *   (or `client.resendUnknownWrite(error.write)`) to learn what happened; never a new key.
 * - `new-attempt`: nothing was done and trying again may work: a decline worth retrying
 *   (PAYMENT_FAILED, SERVICE_UNAVAILABLE), a rate limit, or a call that was not sent (the service
 *   or its token endpoint unreachable, an abort). A new attempt may take a new key.
 * - `no`: repeating cannot help: fix the input or the configuration, choose another payment method,
 *   or (IdempotencyWindowPassedError) look the write up at the service and decide by hand.
 */
export type RetryAdvice = "same-key" | "new-attempt" | "no";

/** The writes of the client: each ends done, refused, not_sent or unknown. */
export type WriteOperation =
  | "authorizations.create"
  | "orders.capture"
  | "orders.cancel"
  | "orders.refund"
  | "customerTokens.cancel";

/** A write whose outcome is unknown, exactly as sent: store it (JSON) and resend it later. */
export interface UnknownWrite {
  readonly operation: WriteOperation;
  readonly method: "POST" | "DELETE";
  /** Holds ids (a customer token): store it, never log it. */
  readonly path: string;
  /** The exact serialised body that was sent. */
  readonly body?: string;
  readonly idempotencyKey: string;
  /** When the key was first sent (ISO 8601). */
  readonly firstSentAt: string;
}

/** One entry of the service's `error.errors` array. */
export interface ErrorReasonEntry {
  readonly reason: string;
  readonly message: string;
  /** Field path, when the service names one (the sandbox does for 400 validation entries). */
  readonly field?: string;
  /** Rule name, when the service names one. */
  readonly rule?: string;
}

export interface PurchaseAuthErrorDetails {
  /** Overrides the kind's own outcome (e.g. an AuthenticationError from the token endpoint: not_sent). */
  outcome?: FailedOutcome;
  status?: number;
  requestId?: string;
  reasons?: ReadonlyArray<ErrorReasonEntry>;
  idempotencyKey?: string;
  cause?: unknown;
}

export class PurchaseAuthError extends Error {
  /** Stable name of the error kind (class names do not survive minification). */
  static readonly kind: string = "PurchaseAuthError";
  /** HTTP status of the response, when there was one. */
  readonly status: number | undefined;
  /** The service's response id (`id` of the envelope), for support requests. */
  readonly requestId: string | undefined;
  /** The service's `error.errors` entries (may be empty). */
  readonly reasons: ReadonlyArray<ErrorReasonEntry>;
  /** The idempotency key the request carried: retry with it to resolve an unknown outcome. */
  readonly idempotencyKey: string | undefined;
  /** How the call ended: refused, not_sent or unknown (see the README's outcome table). */
  readonly outcome: FailedOutcome;
  /** The outcome errors of this kind have unless told otherwise. */
  static readonly defaultOutcome: FailedOutcome = "refused";

  constructor(message: string, details: PurchaseAuthErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    const kind = (new.target as typeof PurchaseAuthError).kind;
    this.name = kind;
    this.outcome = details.outcome ?? (new.target as typeof PurchaseAuthError).defaultOutcome;
    this.status = details.status;
    this.requestId = details.requestId;
    this.reasons = details.reasons ?? [];
    this.idempotencyKey = details.idempotencyKey;
    Object.defineProperty(this, MARKER, { value: kind });
  }

  /** The first reason, e.g. "TOKEN_REVOKED". */
  get reason(): string | undefined {
    return this.reasons[0]?.reason;
  }

  /** What to do next: see `RetryAdvice`. */
  get retry(): RetryAdvice {
    if (this.outcome === "unknown") return "same-key";
    const info: ErrorReasonInfo | undefined =
      this.reason === undefined ? undefined : errorReasonInfo(this.reason);
    return info?.worthRetrying ? "new-attempt" : "no";
  }

  /**
   * @deprecated Overloaded (it meant "same key" for unknown outcomes but "new key" for declines):
   * use `retry` and `outcome`. True when `retry` is not "no".
   */
  get retryable(): boolean {
    return this.retry !== "no";
  }

  /** True for any error thrown by this package, even from another copy of it. */
  static isInstance(value: unknown): value is PurchaseAuthError {
    return kindOf(value) !== undefined;
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      message: this.message,
      status: this.status,
      requestId: this.requestId,
      reason: this.reason,
      reasons: this.reasons,
      outcome: this.outcome,
      retry: this.retry,
      idempotencyKey: this.idempotencyKey,
    };
  }
}

/** The client was constructed with options that cannot work. `option` names the one to change. */
export class ConfigurationError extends PurchaseAuthError {
  static override readonly kind: string = "ConfigurationError";
  static override readonly defaultOutcome: FailedOutcome = "not_sent";
  declare readonly name: "ConfigurationError";
  static override isInstance(value: unknown): value is ConfigurationError {
    return kindOf(value) === "ConfigurationError";
  }
  readonly option: string;
  constructor(option: string, message: string) {
    super(message);
    this.option = option;
  }
}

/** Issues named in a ValidationError's message; all (up to MAX_ISSUES) stay in `issues`. */
const MESSAGE_ISSUES = 10;
/** Issues kept on a ValidationError: a pathological input cannot make an unbounded error. */
const MAX_ISSUES = 100;

/** The request breaks a rule of the interface; found before any network call. */
export class ValidationError extends PurchaseAuthError {
  static override readonly kind: string = "ValidationError";
  static override readonly defaultOutcome: FailedOutcome = "not_sent";
  declare readonly name: "ValidationError";
  static override isInstance(value: unknown): value is ValidationError {
    return kindOf(value) === "ValidationError";
  }
  readonly issues: ReadonlyArray<ValidationIssue>;
  constructor(issues: ReadonlyArray<ValidationIssue>) {
    // Bounded, whatever the input: the first issues in the message, a count of the rest.
    const shown = issues.slice(0, MESSAGE_ISSUES).map((issue) => issue.message);
    const more = issues.length > MESSAGE_ISSUES ? `; and ${issues.length - MESSAGE_ISSUES} more` : "";
    super(`Invalid request: ${shown.join("; ")}${more}`);
    this.issues = issues.length > MAX_ISSUES ? issues.slice(0, MAX_ISSUES) : issues;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), issues: this.issues };
  }
}

/** The service answered 400: the request breaks a rule it checks. */
export class InvalidRequestError extends PurchaseAuthError {
  static override readonly kind: string = "InvalidRequestError";
  declare readonly name: "InvalidRequestError";
  static override isInstance(value: unknown): value is InvalidRequestError {
    return kindOf(value) === "InvalidRequestError";
  }
}

/**
 * Authentication failed: the service answered 401 even with a fresh token, or the token endpoint
 * refused the credentials. `oauthError` is the OAuth 2.0 error code when the token endpoint gave one.
 */
export class AuthenticationError extends PurchaseAuthError {
  static override readonly kind: string = "AuthenticationError";
  declare readonly name: "AuthenticationError";
  static override isInstance(value: unknown): value is AuthenticationError {
    return kindOf(value) === "AuthenticationError";
  }
  readonly oauthError: string | undefined;
  constructor(message: string, details: PurchaseAuthErrorDetails & { oauthError?: string } = {}) {
    super(message, details);
    this.oauthError = details.oauthError;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), oauthError: this.oauthError };
  }
}

/** The customer token or order does not exist for this merchant (404). */
export class NotFoundError extends PurchaseAuthError {
  static override readonly kind: string = "NotFoundError";
  declare readonly name: "NotFoundError";
  static override isInstance(value: unknown): value is NotFoundError {
    return kindOf(value) === "NotFoundError";
  }
}

/** The authorization could not be performed (422); `reason` says why, e.g. TOKEN_REVOKED. */
export class DeclinedError extends PurchaseAuthError {
  static override readonly kind: string = "DeclinedError";
  declare readonly name: "DeclinedError";
  static override isInstance(value: unknown): value is DeclinedError {
    return kindOf(value) === "DeclinedError";
  }
}

/** An order write broke a state rule (INVALID_ORDER_STATE or AMOUNT_EXCEEDS_REMAINING). */
export class OrderStateError extends PurchaseAuthError {
  static override readonly kind: string = "OrderStateError";
  declare readonly name: "OrderStateError";
  static override isInstance(value: unknown): value is OrderStateError {
    return kindOf(value) === "OrderStateError";
  }
}

/**
 * The idempotency key was refused: it is not a GUID (IDEMPOTENCY_KEY_PARSING) or its stored
 * response has expired (IDEMPOTENCY_RESPONSE_EXPIRED). Neither is fixed by retrying the same key.
 */
export class IdempotencyError extends PurchaseAuthError {
  static override readonly kind: string = "IdempotencyError";
  declare readonly name: "IdempotencyError";
  static override isInstance(value: unknown): value is IdempotencyError {
    return kindOf(value) === "IdempotencyError";
  }
}

/**
 * Nothing was done, and trying later may work: the token endpoint or the service could not be
 * reached before anything was sent (`not_sent`), or the service rate-limited every attempt (429,
 * `refused`), or a read kept failing. Never thrown for a write that may have reached the service
 * (that is OutcomeUnknownError). `retry` is `new-attempt`.
 */
export class ServiceUnavailableError extends PurchaseAuthError {
  static override readonly kind: string = "ServiceUnavailableError";
  static override readonly defaultOutcome: FailedOutcome = "not_sent";
  declare readonly name: "ServiceUnavailableError";
  static override isInstance(value: unknown): value is ServiceUnavailableError {
    return kindOf(value) === "ServiceUnavailableError";
  }
  override get retry(): RetryAdvice {
    return this.outcome === "unknown" ? "same-key" : "new-attempt";
  }
}

/**
 * The caller's signal aborted the call before anything was sent (after sending: OutcomeUnknownError).
 * `cause` is the signal's reason; `retry` is `new-attempt` (nothing happened).
 */
export class AbortedError extends PurchaseAuthError {
  static override readonly kind: string = "AbortedError";
  static override readonly defaultOutcome: FailedOutcome = "not_sent";
  declare readonly name: "AbortedError";
  static override isInstance(value: unknown): value is AbortedError {
    return kindOf(value) === "AbortedError";
  }
  override get retry(): RetryAdvice {
    return "new-attempt";
  }
}

/**
 * Nobody knows whether the request took effect: the connection failed, an attempt timed out, the
 * caller aborted mid-flight, or the same key stayed "in progress", until retries ran out. Repeat the
 * call with `idempotencyKey` (within the hour the service keeps it) to learn the real outcome;
 * never with a new key, which could charge twice.
 */
export class OutcomeUnknownError extends PurchaseAuthError {
  static override readonly kind: string = "OutcomeUnknownError";
  static override readonly defaultOutcome: FailedOutcome = "unknown";
  declare readonly name: "OutcomeUnknownError";
  declare readonly outcome: "unknown";
  declare readonly idempotencyKey: string;
  static override isInstance(value: unknown): value is OutcomeUnknownError {
    return kindOf(value) === "OutcomeUnknownError";
  }
  /** When the key was first sent; the service answers it for an hour after. */
  readonly firstSentAt: Date;
  /** The write exactly as sent, JSON-safe: store it and `client.resendUnknownWrite(write)` later. */
  readonly write: UnknownWrite;
  constructor(message: string, details: PurchaseAuthErrorDetails & { write: UnknownWrite }) {
    super(message, { ...details, idempotencyKey: details.write.idempotencyKey });
    this.write = details.write;
    this.firstSentAt = new Date(details.write.firstSentAt);
  }
  override get retry(): RetryAdvice {
    return "same-key";
  }
  override toJSON(): Record<string, unknown> {
    // Not the write itself: its path and body hold the customer token.
    return { ...super.toJSON(), firstSentAt: this.write.firstSentAt, operation: this.write.operation };
  }
}

/**
 * A key too old to be sent again: the service answers a key for one hour and forgets it after 24,
 * so a resend could be performed as new and charge twice. Thrown before anything is sent, or when
 * the service answers IDEMPOTENCY_RESPONSE_EXPIRED (then with its `reason` and `requestId`; on a
 * first send the key was used before, possibly by another process). The original's fate stays
 * unknown: look it up at the service and decide by hand.
 */
export class IdempotencyWindowPassedError extends PurchaseAuthError {
  static override readonly kind: string = "IdempotencyWindowPassedError";
  static override readonly defaultOutcome: FailedOutcome = "unknown";
  declare readonly name: "IdempotencyWindowPassedError";
  declare readonly idempotencyKey: string;
  static override isInstance(value: unknown): value is IdempotencyWindowPassedError {
    return kindOf(value) === "IdempotencyWindowPassedError";
  }
  /** When this client first sent the key (this call's send when another had used it earlier). */
  readonly firstSentAt: Date;
  constructor(
    message: string,
    details: PurchaseAuthErrorDetails & { idempotencyKey: string; firstSentAt: Date },
  ) {
    super(message, details);
    this.firstSentAt = details.firstSentAt;
  }
  override get retry(): RetryAdvice {
    return "no";
  }
}

/**
 * The outcome of anything a write call threw: our errors carry theirs; anything else (an error
 * that is not ours) is read as unknown, the only safe reading.
 */
export function outcomeOf(error: unknown): FailedOutcome {
  return PurchaseAuthError.isInstance(error) ? error.outcome : "unknown";
}

/** The service answered something this client does not understand (an unexpected status or body). */
export class UnexpectedResponseError extends PurchaseAuthError {
  static override readonly kind: string = "UnexpectedResponseError";
  declare readonly name: "UnexpectedResponseError";
  static override isInstance(value: unknown): value is UnexpectedResponseError {
    return kindOf(value) === "UnexpectedResponseError";
  }
}

export type WebhookVerificationFailure =
  | "missing_header"
  | "invalid_signature"
  | "timestamp_outside_tolerance"
  | "invalid_payload"
  | "id_mismatch"
  | "unsupported_event";

/**
 * A webhook that must not be trusted, or (for `unsupported_event`) a genuine one of a type this
 * version does not know: acknowledge those with 2xx and ignore them.
 */
export class WebhookVerificationError extends PurchaseAuthError {
  static override readonly kind: string = "WebhookVerificationError";
  declare readonly name: "WebhookVerificationError";
  static override isInstance(value: unknown): value is WebhookVerificationError {
    return kindOf(value) === "WebhookVerificationError";
  }
  readonly failure: WebhookVerificationFailure;
  constructor(failure: WebhookVerificationFailure, message: string) {
    super(message);
    this.failure = failure;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), failure: this.failure };
  }
}
