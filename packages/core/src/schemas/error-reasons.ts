import { z } from "zod";

/** What the specification (section 7.2) and the supplement say about each error reason. */
export interface ErrorReasonInfo {
  /** Whether a new attempt (with a new idempotency key) may succeed. */
  readonly worthRetrying: boolean;
  /** Whether the reason can arrive in an `authorization.failed` webhook. */
  readonly canBeInWebhook: boolean;
  /** What happened, in words a shop can show or log. */
  readonly description: string;
}

/**
 * Every reason of section 7.2, plus INVALID_REQUEST (our name for the 400 validation entries, which
 * the specification leaves open) and the order reasons of the supplement. PENDING_ACTIVATION is
 * "unspecified" in the specification; we treat it like TOKEN_PENDING: not worth retrying now.
 */
export const ERROR_REASONS = {
  INVALID_CURRENCY: {
    worthRetrying: false,
    canBeInWebhook: false,
    description: "The currency differs from the customer token's currency.",
  },
  TOKEN_PENDING: {
    worthRetrying: false,
    canBeInWebhook: true,
    description: "The customer token is pending review by the buyer's organisation.",
  },
  TOKEN_DENIED: { worthRetrying: false, canBeInWebhook: true, description: "The customer token was denied." },
  TOKEN_REVOKED: {
    worthRetrying: false,
    canBeInWebhook: true,
    description: "The customer token was revoked.",
  },
  TOKEN_CANCELLED: {
    worthRetrying: false,
    canBeInWebhook: true,
    description: "The customer token was cancelled.",
  },
  PAYMENT_METHOD_NO_FUNDS: {
    worthRetrying: false,
    canBeInWebhook: true,
    description: "The payment method has insufficient funds.",
  },
  PAYMENT_METHOD_EXPIRED: {
    worthRetrying: false,
    canBeInWebhook: true,
    description: "The payment method has expired.",
  },
  PAYMENT_DENIED: { worthRetrying: false, canBeInWebhook: true, description: "The purchase was denied." },
  PAYMENT_FAILED: {
    worthRetrying: true,
    canBeInWebhook: true,
    description: "A technical or configuration failure stopped the payment.",
  },
  SERVICE_UNAVAILABLE: {
    worthRetrying: true,
    canBeInWebhook: true,
    description: "The service is temporarily unavailable.",
  },
  IDEMPOTENCY_REQUEST_IN_PROGRESS: {
    worthRetrying: true,
    canBeInWebhook: false,
    description: "Another request with the same idempotency key is in progress.",
  },
  IDEMPOTENCY_RESPONSE_EXPIRED: {
    worthRetrying: false,
    canBeInWebhook: false,
    description: "The stored response for this idempotency key has expired (kept one hour).",
  },
  IDEMPOTENCY_KEY_PARSING: {
    worthRetrying: false,
    canBeInWebhook: false,
    description: "The idempotency key is not a GUID.",
  },
  PENDING_ACTIVATION: {
    worthRetrying: false,
    canBeInWebhook: true,
    description: "The customer token is pending activation.",
  },
  INVALID_REQUEST: {
    worthRetrying: false,
    canBeInWebhook: false,
    description: "The request breaks a rule of the interface.",
  },
  INVALID_ORDER_STATE: {
    worthRetrying: false,
    canBeInWebhook: false,
    description: "The order's state does not allow this operation.",
  },
  AMOUNT_EXCEEDS_REMAINING: {
    worthRetrying: false,
    canBeInWebhook: false,
    description: "The amount is larger than what remains on the order.",
  },
} as const satisfies Record<string, ErrorReasonInfo>;

export type ErrorReason = keyof typeof ERROR_REASONS;

export const errorReasonSchema = z.enum(Object.keys(ERROR_REASONS) as [ErrorReason, ...ErrorReason[]]);

/** The reasons an `authorization.failed` webhook may carry. */
export const WEBHOOK_FAILURE_REASONS = (Object.keys(ERROR_REASONS) as ErrorReason[]).filter(
  (reason) => ERROR_REASONS[reason].canBeInWebhook,
);

/** Looks a reason up; unknown reasons (a newer service) are neither retried nor trusted. */
export function errorReasonInfo(reason: string): ErrorReasonInfo | undefined {
  return Object.hasOwn(ERROR_REASONS, reason) ? ERROR_REASONS[reason as ErrorReason] : undefined;
}
