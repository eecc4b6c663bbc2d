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

  constructor(message: string, details: PurchaseAuthErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    const kind = (new.target as typeof PurchaseAuthError).kind;
    this.name = kind;
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

  /**
   * Whether a new attempt may succeed (specification section 7.2, "worth retrying"). A declined
   * charge is not; a technical failure is. Outcome-unknown errors are retried with the same key.
   */
  get retryable(): boolean {
    const info: ErrorReasonInfo | undefined =
      this.reason === undefined ? undefined : errorReasonInfo(this.reason);
    return info?.worthRetrying ?? false;
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
      retryable: this.retryable,
      idempotencyKey: this.idempotencyKey,
    };
  }
}

/** The client was constructed with options that cannot work. `option` names the one to change. */
export class ConfigurationError extends PurchaseAuthError {
  static override readonly kind: string = "ConfigurationError";
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

/** The request breaks a rule of the interface; found before any network call. */
export class ValidationError extends PurchaseAuthError {
  static override readonly kind: string = "ValidationError";
  declare readonly name: "ValidationError";
  static override isInstance(value: unknown): value is ValidationError {
    return kindOf(value) === "ValidationError";
  }
  readonly issues: ReadonlyArray<ValidationIssue>;
  constructor(issues: ReadonlyArray<ValidationIssue>) {
    const summary = issues.map((issue) => issue.message).join("; ");
    super(`Invalid request: ${summary}`);
    this.issues = issues;
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

/** The service kept answering 503 until the retries or the deadline ran out. */
export class ServiceUnavailableError extends PurchaseAuthError {
  static override readonly kind: string = "ServiceUnavailableError";
  declare readonly name: "ServiceUnavailableError";
  static override isInstance(value: unknown): value is ServiceUnavailableError {
    return kindOf(value) === "ServiceUnavailableError";
  }
  /** Always: the request can be repeated, with the same idempotency key (specification 7.1). */
  override get retryable(): boolean {
    return true;
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
  declare readonly name: "OutcomeUnknownError";
  static override isInstance(value: unknown): value is OutcomeUnknownError {
    return kindOf(value) === "OutcomeUnknownError";
  }
  override get retryable(): boolean {
    return true;
  }
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
