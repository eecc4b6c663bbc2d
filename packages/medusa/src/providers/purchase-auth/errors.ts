import { MedusaError } from "@medusajs/framework/utils";
import {
  AuthenticationError,
  DeclinedError,
  ERROR_REASONS,
  IdempotencyError,
  NotFoundError,
  OrderStateError,
  OutcomeUnknownError,
  PurchaseAuthError,
  ServiceUnavailableError,
  UnexpectedResponseError,
  ValidationError,
} from "@purchase-auth/core";

/**
 * Errors after which the service may have done what was asked: the request must be repeated with
 * the SAME idempotency key to learn the outcome, never treated as "nothing happened". An unexpected
 * answer with a 2xx status counts too (the service did something we could not read).
 */
export function isUncertain(error: unknown): boolean {
  if (OutcomeUnknownError.isInstance(error) || ServiceUnavailableError.isInstance(error)) return true;
  if (IdempotencyError.isInstance(error)) return true;
  if (UnexpectedResponseError.isInstance(error)) {
    const status = (error as { status?: number }).status;
    return status === undefined || (status >= 200 && status < 300);
  }
  return false;
}

/** The words a shop can show for an error reason of the specification (section 7.2). */
export function describeReason(reason: string | undefined): string {
  if (reason === undefined) return "no reason given";
  const known = (ERROR_REASONS as Record<string, { description: string } | undefined>)[reason];
  return known ? `${reason}: ${known.description}` : reason;
}

/**
 * Turns what core throws into a MedusaError whose message says what happened and what to do. The
 * messages carry reasons, ids and statuses only: core's errors never hold a secret.
 */
export function toMedusaError(operation: string, error: unknown): Error {
  if (MedusaError.isMedusaError(error)) return error;
  if (DeclinedError.isInstance(error)) {
    return new MedusaError(
      MedusaError.Types.PAYMENT_AUTHORIZATION_ERROR,
      `The payment was declined (${describeReason(error.reason)})`,
    );
  }
  if (NotFoundError.isInstance(error)) {
    return new MedusaError(
      MedusaError.Types.NOT_FOUND,
      `${operation}: the service does not know this customer token or order for this merchant account.`,
    );
  }
  if (OrderStateError.isInstance(error)) {
    return new MedusaError(MedusaError.Types.NOT_ALLOWED, `${operation}: ${describeReason(error.reason)}`);
  }
  if (ValidationError.isInstance(error)) {
    return new MedusaError(MedusaError.Types.INVALID_DATA, `${operation}: ${error.message}`);
  }
  if (AuthenticationError.isInstance(error)) {
    return new MedusaError(
      MedusaError.Types.UNEXPECTED_STATE,
      `${operation}: the service refused the credentials${error.oauthError ? ` (${error.oauthError})` : ""}; check the provider's clientId, clientSecret and scope.`,
    );
  }
  if (IdempotencyError.isInstance(error)) {
    return new MedusaError(
      MedusaError.Types.UNEXPECTED_STATE,
      `${operation}: ${describeReason(error.reason)} The outcome of the earlier request must be checked at the service.`,
    );
  }
  if (OutcomeUnknownError.isInstance(error) || ServiceUnavailableError.isInstance(error)) {
    return new MedusaError(
      MedusaError.Types.UNEXPECTED_STATE,
      `${operation}: the service did not answer in time. Try again: the retry reuses the same idempotency key, so it cannot charge twice.`,
    );
  }
  if (PurchaseAuthError.isInstance(error)) {
    return new MedusaError(MedusaError.Types.UNEXPECTED_STATE, `${operation}: ${error.message}`);
  }
  return error instanceof Error ? error : new Error(`${operation} failed: ${String(error)}`);
}

/** Fields for a log line about a failed call: kind, status, reason, request id; never a secret. */
export function logFieldsOf(error: unknown): Record<string, unknown> {
  if (PurchaseAuthError.isInstance(error)) {
    return { error: error.name, status: error.status, reason: error.reason, requestId: error.requestId };
  }
  return { error: error instanceof Error ? error.name : typeof error };
}
