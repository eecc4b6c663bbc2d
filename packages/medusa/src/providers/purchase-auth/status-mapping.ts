import { PaymentSessionStatus } from "@medusajs/framework/utils";
import type { CustomerTokenStatus, OrderStatus } from "@purchase-auth/core";
import type { AuthorizationState } from "./session-data";

/** Medusa's view of an order of the service (supplement A). */
export function sessionStatusOfOrder(status: OrderStatus): PaymentSessionStatus {
  switch (status) {
    case "NotActivated":
      return PaymentSessionStatus.AUTHORIZED;
    case "PartActivated":
    case "Activated":
    case "PartReturned":
    case "Returned":
      return PaymentSessionStatus.CAPTURED;
    case "Cancelled":
    case "Expired":
      return PaymentSessionStatus.CANCELED;
  }
}

/** Our state of an order (for the payment data). */
export function stateOfOrder(status: OrderStatus): AuthorizationState {
  const sessionStatus = sessionStatusOfOrder(status);
  if (sessionStatus === PaymentSessionStatus.CAPTURED) return "captured";
  if (sessionStatus === PaymentSessionStatus.CANCELED) return "canceled";
  return "authorized";
}

/** Medusa's view of what this provider last recorded, when there is no order to read. */
export function sessionStatusOfState(state: AuthorizationState | null): PaymentSessionStatus {
  switch (state) {
    case "pending_authorization":
      return PaymentSessionStatus.PENDING_AUTHORIZATION;
    case "authorized":
      return PaymentSessionStatus.AUTHORIZED;
    case "captured":
      return PaymentSessionStatus.CAPTURED;
    case "failed":
      return PaymentSessionStatus.ERROR;
    case "canceled":
      return PaymentSessionStatus.CANCELED;
    default:
      return PaymentSessionStatus.PENDING;
  }
}

/**
 * The error reason an authorization with a token in this status gets (specification section 3 and
 * supplement D), or undefined for an Active token.
 */
export function declineReasonOfTokenStatus(status: CustomerTokenStatus): string | undefined {
  switch (status) {
    case "Active":
      return undefined;
    case "Pending":
      return "TOKEN_PENDING";
    case "PendingActivation":
      return "PENDING_ACTIVATION";
    case "Denied":
      return "TOKEN_DENIED";
    case "Revoked":
      return "TOKEN_REVOKED";
    case "Cancelled":
      return "TOKEN_CANCELLED";
  }
}
