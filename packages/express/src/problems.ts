import {
  AuthenticationError,
  ConfigurationError,
  DeclinedError,
  type ErrorReason,
  errorReasonInfo,
  IdempotencyError,
  IdempotencyWindowPassedError,
  InvalidRequestError,
  type Logger,
  NotFoundError,
  OrderStateError,
  OutcomeUnknownError,
  PurchaseAuthError,
  ServiceUnavailableError,
  UnexpectedResponseError,
  ValidationError,
  type ValidationIssue,
  WebhookVerificationError,
} from "@purchase-auth/core";
import type { ErrorRequestHandler, Request } from "express";

// Every failure leaves this package as an RFC 9457 problem (application/problem+json) whose `detail`
// a shop can show as it is: never a stack, a service-internal text or a secret.

/** A problem answer (RFC 9457) with this package's extension members. */
export interface Problem {
  /** Identifies the kind of problem: `urn:purchase-auth:problem:<slug>`, or `about:blank`. */
  type: string;
  /** Short, the same for every occurrence of the kind. */
  title: string;
  status: number;
  /** What happened, in words a shopper (or, for merchant routes, a merchant) can read. */
  detail: string;
  /** The specification's error reason, when the service gave one (e.g. "TOKEN_REVOKED"). */
  reason?: string;
  /** Whether trying again may succeed; false means "choose another payment method". */
  retryable?: boolean;
  /** The fields of the request that are wrong, each with what is wrong with it. */
  errors?: ProblemFieldError[];
}

export interface ProblemFieldError {
  /** Path of the field, e.g. `cartId` or `order.items[0].unitPrice`. */
  field: string;
  message: string;
}

const PROBLEM_TYPE = "urn:purchase-auth:problem:";

/**
 * An error that is already a problem answer. Throw it from your own hooks (`buildOrder`,
 * `resolveCustomer`) to answer with it: `throw new HttpProblem({ status: 409, title: "Empty cart",
 * detail: "Your cart is empty." })`.
 */
export class HttpProblem extends Error {
  readonly problem: Problem;
  constructor(problem: Omit<Problem, "type"> & { type?: string }) {
    super(problem.detail);
    this.name = "HttpProblem";
    const { type = "about:blank", ...rest } = problem;
    this.problem = { type, ...rest };
  }
}

/**
 * The order `buildOrder` returned breaks a rule of the interface (a float price, a 60-character
 * reference): a bug in the app. Answered as a generic 500 and logged with its issues.
 */
export class OrderBuildError extends Error {
  readonly issues: ReadonlyArray<ValidationIssue>;
  constructor(issues: ReadonlyArray<ValidationIssue>) {
    super(
      `buildOrder returned an invalid order: ${issues
        .slice(0, 10)
        .map((issue) => issue.message)
        .join("; ")}`,
    );
    this.name = "OrderBuildError";
    this.issues = issues;
  }
}

/** Builds a problem of this package's own kinds. */
export function problem(
  slug: string,
  status: number,
  title: string,
  detail: string,
  extra: Pick<Problem, "reason" | "retryable" | "errors"> = {},
): HttpProblem {
  return new HttpProblem({ type: PROBLEM_TYPE + slug, status, title, detail, ...extra });
}

/**
 * A message a shop can show for every error reason of the specification (section 7.2), of the
 * supplement, and this package's own `CUSTOMER_TOKEN_NOT_FOUND`. Typed over core's `ERROR_REASONS`,
 * so a reason added there fails to compile here until it has a message.
 */
export const SHOPPER_MESSAGES: Readonly<Record<ErrorReason | "CUSTOMER_TOKEN_NOT_FOUND", string>> = {
  INVALID_CURRENCY:
    "Your saved payment method cannot be used for this currency. Please choose another payment method.",
  TOKEN_PENDING:
    "Your saved payment method is still awaiting approval by your organisation. Please try again once it is approved, or choose another payment method.",
  TOKEN_DENIED:
    "Your saved payment method was not approved by your organisation. Please choose another payment method.",
  TOKEN_REVOKED: "Your saved payment method has been revoked. Please choose another payment method.",
  TOKEN_CANCELLED: "Your saved payment method has been cancelled. Please choose another payment method.",
  PAYMENT_METHOD_NO_FUNDS:
    "Your payment method has insufficient funds. Please choose another payment method or try again later.",
  PAYMENT_METHOD_EXPIRED: "Your payment method has expired. Please choose another payment method.",
  PAYMENT_DENIED: "Your payment was declined. Please choose another payment method.",
  PAYMENT_FAILED: "Your payment could not be completed because of a technical problem. Please try again.",
  SERVICE_UNAVAILABLE: "The payment service is temporarily unavailable. Please try again in a few minutes.",
  IDEMPOTENCY_REQUEST_IN_PROGRESS: "Your payment is already being processed. Please wait a moment.",
  IDEMPOTENCY_RESPONSE_EXPIRED:
    "We could not confirm whether your payment went through. Please contact us before paying again.",
  IDEMPOTENCY_KEY_PARSING: "Your payment could not be processed. Please try again later.",
  PENDING_ACTIVATION:
    "Your saved payment method has not been activated yet. Please try again later or choose another payment method.",
  INVALID_REQUEST: "Your order could not be charged because it is incomplete. Please contact us.",
  INVALID_ORDER_STATE: "This payment can no longer be changed this way.",
  AMOUNT_EXCEEDS_REMAINING: "The amount is more than what remains on this payment.",
  CUSTOMER_TOKEN_NOT_FOUND:
    "Your saved payment method could not be found. Please choose another payment method.",
};

const FALLBACK_DECLINE_MESSAGE =
  "Your payment could not be completed. Please choose another payment method or try again later.";

/** The shopper message for an error reason; a general one for a reason this version does not know. */
export function shopperMessageFor(reason: string | undefined): string {
  if (reason !== undefined && Object.hasOwn(SHOPPER_MESSAGES, reason)) {
    return SHOPPER_MESSAGES[reason as keyof typeof SHOPPER_MESSAGES];
  }
  return FALLBACK_DECLINE_MESSAGE;
}

const UNAVAILABLE = "Payments are temporarily unavailable. Please try again later.";

/**
 * The problem answer for any error: core's errors, this package's, body-parser's, errors with an
 * HTTP `status`/`statusCode` (the http-errors convention), and anything else (a 500 that says
 * nothing about its cause).
 */
export function problemFromError(error: unknown): Problem {
  return knownProblem(error) ?? internalProblem();
}

/** The answer for the errors this package knows how to answer; undefined for anything else. */
export function knownProblem(error: unknown): Problem | undefined {
  if (error instanceof HttpProblem) return error.problem;
  if (error instanceof OrderBuildError) return internalProblem();
  if (PurchaseAuthError.isInstance(error)) return fromPurchaseAuthError(error, error.reason);
  return fromBodyParserError(error) ?? fromHttpError(error);
}

function internalProblem(): Problem {
  return problem(
    "internal",
    500,
    "Internal error",
    "Something went wrong on our side. Please try again later.",
  ).problem;
}

// `error` stays `unknown` on purpose: core's error classes are structurally identical, so a false
// `X.isInstance(error)` on a typed value would narrow it to never for the checks after it.
function fromPurchaseAuthError(error: unknown, reason: string | undefined): Problem {
  if (ValidationError.isInstance(error)) {
    const errors = error.issues.map((issue) => ({ field: issue.path, message: issue.message }));
    return problem("invalid-request", 400, "Invalid request", summary(errors), { errors }).problem;
  }
  if (InvalidRequestError.isInstance(error)) {
    // Our own words, never the service's message: it is not written for shoppers, and may echo
    // what the request carried.
    const errors = error.reasons.map((entry) => {
      const field = entry.field ?? "(request)";
      const rule = entry.rule === undefined ? "" : ` (rule ${entry.rule})`;
      return { field, message: `${field} was refused by the payment service${rule}` };
    });
    return problem("invalid-request", 400, "Invalid request", SHOPPER_MESSAGES.INVALID_REQUEST, {
      reason: "INVALID_REQUEST",
      errors,
    }).problem;
  }
  if (DeclinedError.isInstance(error)) {
    // Worth a new attempt (PAYMENT_FAILED, SERVICE_UNAVAILABLE), or another payment method.
    const worthRetrying = reason !== undefined && errorReasonInfo(reason)?.worthRetrying === true;
    const title = worthRetrying ? "Payment failed" : "Payment declined";
    return problem("payment-declined", 422, title, shopperMessageFor(reason), {
      ...(reason === undefined ? {} : { reason }),
      retryable: worthRetrying,
    }).problem;
  }
  if (NotFoundError.isInstance(error)) {
    return problem(
      "payment-method-not-found",
      422,
      "Payment method not found",
      SHOPPER_MESSAGES.CUSTOMER_TOKEN_NOT_FOUND,
      { reason: "CUSTOMER_TOKEN_NOT_FOUND", retryable: false },
    ).problem;
  }
  if (OrderStateError.isInstance(error)) {
    return problem("order-state", 409, "Order state conflict", shopperMessageFor(reason), {
      ...(reason === undefined ? {} : { reason }),
      retryable: false,
    }).problem;
  }
  if (OutcomeUnknownError.isInstance(error)) {
    return problem(
      "payment-confirming",
      503,
      "Confirming payment",
      "We are confirming your payment. Please check again in a moment; you will not be charged twice.",
      { retryable: true },
    ).problem;
  }
  if (ServiceUnavailableError.isInstance(error) || wasNotSent(error)) {
    // Nothing was charged (the service, or its token endpoint, was unavailable): try again later.
    return problem("service-unavailable", 503, "Service unavailable", SHOPPER_MESSAGES.SERVICE_UNAVAILABLE, {
      reason: "SERVICE_UNAVAILABLE",
      retryable: true,
    }).problem;
  }
  if (
    (IdempotencyError.isInstance(error) && reason === "IDEMPOTENCY_RESPONSE_EXPIRED") ||
    IdempotencyWindowPassedError.isInstance(error)
  ) {
    return problem("payment-unconfirmed", 409, "Payment unconfirmed", shopperMessageFor(reason), {
      reason,
      retryable: false,
    }).problem;
  }
  if (WebhookVerificationError.isInstance(error)) {
    return problem(
      "invalid-webhook",
      400,
      "Invalid webhook",
      `The webhook failed verification (${error.failure}).`,
    ).problem;
  }
  // Authentication, configuration, unexpected answers, a malformed key: ours to fix, not the shopper's.
  const status =
    AuthenticationError.isInstance(error) || UnexpectedResponseError.isInstance(error) ? 502 : 500;
  const slug = ConfigurationError.isInstance(error) ? "internal" : "payments-unavailable";
  return problem(slug, status, "Payments unavailable", UNAVAILABLE, { retryable: false }).problem;
}

/**
 * Core's `not_sent` outcome (token endpoint down, connection refused before any byte): nothing can
 * have reached the service. Read from the error's `outcome` so older cores still map as before.
 */
function wasNotSent(error: unknown): boolean {
  return (
    (error as { outcome?: unknown }).outcome === "not_sent" &&
    !ValidationError.isInstance(error) &&
    !ConfigurationError.isInstance(error)
  );
}

/**
 * An error that carries an HTTP status (http-errors' `createError(404)`, a hook's own error):
 * answered with that status; its message is shown only when it says it may be (`expose`, true for
 * http-errors' 4xx), never for a 5xx.
 */
function fromHttpError(error: unknown): Problem | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { status, statusCode, expose, message } = error as {
    status?: unknown;
    statusCode?: unknown;
    expose?: unknown;
    message?: unknown;
  };
  const code = typeof status === "number" ? status : statusCode;
  if (typeof code !== "number" || !Number.isInteger(code) || code < 400 || code > 599) return undefined;
  if (code >= 500) return { ...internalProblem(), status: code };
  const detail =
    expose === true && typeof message === "string" && message !== ""
      ? message
      : "The request could not be handled.";
  return { type: "about:blank", title: httpTitle(code), status: code, detail };
}

function httpTitle(status: number): string {
  const titles: Record<number, string> = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    409: "Conflict",
    415: "Unsupported media type",
    422: "Unprocessable content",
    429: "Too many requests",
  };
  return titles[status] ?? "Request refused";
}

/** body-parser (express.json / express.raw) errors carry `type` and `status`. */
function fromBodyParserError(error: unknown): Problem | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { type, status } = error as { type?: unknown; status?: unknown };
  if (typeof type !== "string" || typeof status !== "number") return undefined;
  switch (type) {
    case "entity.too.large":
      return problem("payload-too-large", 413, "Payload too large", "The request body is too large.").problem;
    case "entity.parse.failed":
      return problem("invalid-json", 400, "Invalid JSON", "The request body is not valid JSON.").problem;
    case "encoding.unsupported":
    case "charset.unsupported":
    case "encoding.not.supported":
      return problem(
        "unsupported-media-type",
        415,
        "Unsupported media type",
        "The body's encoding is not supported.",
      ).problem;
    default:
      if (status >= 400 && status < 500) {
        return problem("bad-request", status, "Bad request", "The request could not be read.").problem;
      }
      return undefined;
  }
}

function summary(errors: ProblemFieldError[]): string {
  return errors.map((entry) => entry.message).join("; ") || "The request is invalid.";
}

export interface ProblemHandlerOptions {
  /** Receives one line per 5xx, with the error's name and message (core's never hold secrets). Default: console. */
  logger?: Logger;
  /**
   * Called with every error answered with a 5xx and every error passed on, with its request: hand
   * it to Sentry or your monitoring. A failing hook is logged, never thrown.
   */
  onError?: (error: unknown, req: Request) => void;
  /**
   * Errors this package does not know (a bug in a hook, say): answer them as a generic 500 (true,
   * the default for an app-level handler) or pass them on with `next(err)` to the app's own error
   * handler (false, what the router does).
   */
  answerUnknownErrors?: boolean;
}

/**
 * Express error middleware that answers every error as a problem (`application/problem+json`).
 * The router installs it for its own routes (passing errors it does not know to `next(err)`);
 * mount it after yours to answer the same way.
 */
export function purchaseAuthErrorHandler(options: ProblemHandlerOptions = {}): ErrorRequestHandler {
  const logger = options.logger ?? console;
  const answerUnknown = options.answerUnknownErrors ?? true;
  const report = (error: unknown, req: Request) => {
    try {
      options.onError?.(error, req);
    } catch (hookError) {
      logger.error?.("purchase-auth: the onError hook failed", { error: String(hookError) });
    }
  };
  return (error, req, res, next) => {
    const known = knownProblem(error);
    if (res.headersSent || (known === undefined && !answerUnknown)) {
      logger.error?.(
        "purchase-auth: unhandled error, passed to the app's error handler",
        describe(error, req),
      );
      report(error, req);
      next(error);
      return;
    }
    const body = known ?? internalProblem();
    if (body.status >= 500) {
      logger.error?.("purchase-auth: request failed", { ...describe(error, req), status: body.status });
      report(error, req);
    }
    if (body.status === 503) res.setHeader("Retry-After", "5");
    res.status(body.status).type("application/problem+json").send(JSON.stringify(body));
  };
}

/** What a log line says about a failed request: never a body, a token or a secret. */
function describe(error: unknown, req: Request): Record<string, unknown> {
  return {
    method: req.method,
    path: req.originalUrl.split("?")[0],
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    ...(error instanceof OrderBuildError ? { issues: error.issues } : {}),
    ...(PurchaseAuthError.isInstance(error) && error.requestId ? { requestId: error.requestId } : {}),
  };
}
