import {
  AuthenticationError,
  ConfigurationError,
  DeclinedError,
  type ErrorReason,
  IdempotencyError,
  InvalidRequestError,
  type Logger,
  NotFoundError,
  OrderStateError,
  OutcomeUnknownError,
  PurchaseAuthError,
  ServiceUnavailableError,
  UnexpectedResponseError,
  ValidationError,
  WebhookVerificationError,
} from "@purchase-auth/core";
import type { ErrorRequestHandler } from "express";

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
 * The problem answer for any error: core's errors, this package's, body-parser's, and anything else
 * (a 500 that says nothing about its cause).
 */
export function problemFromError(error: unknown): Problem {
  if (error instanceof HttpProblem) return error.problem;
  if (PurchaseAuthError.isInstance(error)) return fromPurchaseAuthError(error, error.reason);
  const bodyProblem = fromBodyParserError(error);
  if (bodyProblem) return bodyProblem;
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
    const title = error.retryable ? "Payment failed" : "Payment declined";
    return problem("payment-declined", 422, title, shopperMessageFor(reason), {
      ...(reason === undefined ? {} : { reason }),
      retryable: error.retryable,
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
  if (ServiceUnavailableError.isInstance(error)) {
    return problem("service-unavailable", 503, "Service unavailable", SHOPPER_MESSAGES.SERVICE_UNAVAILABLE, {
      reason: "SERVICE_UNAVAILABLE",
      retryable: true,
    }).problem;
  }
  if (IdempotencyError.isInstance(error) && reason === "IDEMPOTENCY_RESPONSE_EXPIRED") {
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
  /** Receives one line per 5xx, with the error's name and message (core's never hold secrets). */
  logger?: Logger;
}

/**
 * Express error middleware that answers every error as a problem (`application/problem+json`).
 * The router installs it for its own routes; mount it after yours to answer the same way.
 */
export function purchaseAuthErrorHandler(options: ProblemHandlerOptions = {}): ErrorRequestHandler {
  return (error, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const body = problemFromError(error);
    if (body.status >= 500) {
      options.logger?.error?.("purchase-auth: request failed", {
        method: req.method,
        path: req.originalUrl,
        status: body.status,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        ...(PurchaseAuthError.isInstance(error) && error.requestId ? { requestId: error.requestId } : {}),
      });
    }
    if (body.status === 503) res.setHeader("Retry-After", "5");
    res.status(body.status).type("application/problem+json").send(JSON.stringify(body));
  };
}
