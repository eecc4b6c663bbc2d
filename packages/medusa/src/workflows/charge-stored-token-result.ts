import { errorReasonInfo } from "@purchase-auth/core";
import { describeReason } from "../providers/purchase-auth/errors";

/** Where a charge of a customer's stored token stands after a run of the charge workflow. */
export type StoredTokenChargeStatus =
  /** The service authorized the amount (Manual capture): capture it from the order as usual. */
  | "authorized"
  /** The service authorized and captured it (Auto capture). */
  | "captured"
  /** Accepted (HTTP 202): the service's webhook finishes it (a Payment appears, or it fails). */
  | "pending"
  /** Nothing was charged; `reason` says why and `retry` whether a new attempt may succeed. */
  | "declined"
  /**
   * The service may have charged: run the workflow again for the same order (it repeats the same
   * attempt with the same idempotency key, so it cannot charge twice), or let the reconcile job
   * settle it.
   */
  | "unknown";

/** What to do next: nothing, a new attempt (new key), or repeat the same attempt (same key). */
export type StoredTokenChargeRetry = "no" | "new-attempt" | "same-key";

export interface StoredTokenCharge {
  /** The Medusa order charged. */
  order_id: string;
  status: StoredTokenChargeStatus;
  /**
   * True when this run sent an authorization to the service; false when an earlier run had already
   * settled the charge (or a decline not worth retrying stopped it) and this run only reported it.
   */
  attempted: boolean;
  payment_collection_id: string | null;
  payment_session_id: string | null;
  /** Medusa's payment (authorized or captured charges). */
  payment_id: string | null;
  customer_token: string | null;
  /** The amount in the service's form ("79.60"). */
  amount: string | null;
  /** Lower case, as Medusa keeps it. */
  currency_code: string | null;
  /** The service's order of the authorization. */
  service_order_id: string | null;
  /** The service's reason for a decline (e.g. TOKEN_REVOKED, PAYMENT_METHOD_NO_FUNDS). */
  reason: string | null;
  retry: StoredTokenChargeRetry;
  /** What happened, in words a merchant can read. */
  message: string;
}

/** A decline's advice: PAYMENT_FAILED and SERVICE_UNAVAILABLE (and the like) may succeed anew. */
export function retryOfReason(reason: string | null | undefined): StoredTokenChargeRetry {
  return reason && errorReasonInfo(reason)?.worthRetrying ? "new-attempt" : "no";
}

/** The message of a decline, naming the reason and what to do. */
export function declineMessage(reason: string | null | undefined, detail?: string): string {
  const why = reason ? describeReason(reason) : (detail ?? "no reason given");
  return retryOfReason(reason) === "new-attempt"
    ? `The charge was declined (${why}). Running the charge again makes a new attempt with a new idempotency key.`
    : `The charge was declined (${why}). It is not worth retrying with this customer token: the customer must fix the cause or store a new token (then run it again, with new_attempt for the same token).`;
}

/** The messages of the other outcomes. */
export const STATUS_MESSAGES: Record<Exclude<StoredTokenChargeStatus, "declined">, string> = {
  authorized: "The customer's stored token was charged: the amount is authorized, capture it from the order.",
  captured: "The customer's stored token was charged and the amount captured.",
  pending:
    "The service accepted the charge and decides later: its webhook completes the payment, or marks it failed with the reason.",
  unknown:
    "The service has not told whether the charge went through. Run the charge again for this order: it repeats the same attempt with the same idempotency key and cannot charge twice. The reconcile job also settles it.",
};
