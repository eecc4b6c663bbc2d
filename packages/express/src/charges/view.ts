import type { CaptureMode } from "@purchase-auth/core";
import { shopperMessageFor } from "../problems.js";
import type { ChargeRecord, ChargeStatus } from "../stores/types.js";

/** A charge as the routes answer it: never the customer token, never the app's customer id. */
export interface ChargeView {
  authorizationId?: string;
  reference: string;
  status: ChargeStatus;
  orderId?: string;
  /** Why it failed (an error reason of the specification). */
  reason?: string;
  /** For a failed charge: what to tell the shopper. */
  message?: string;
  amount: string;
  currency: string;
  captureMode: CaptureMode;
}

export function chargeView(charge: ChargeRecord): ChargeView {
  const failed = charge.status === "failed";
  return {
    ...(charge.authorizationId === undefined ? {} : { authorizationId: charge.authorizationId }),
    reference: charge.reference,
    status: charge.status,
    ...(charge.orderId === undefined ? {} : { orderId: charge.orderId }),
    ...(failed && charge.reason !== undefined ? { reason: charge.reason } : {}),
    ...(failed ? { message: shopperMessageFor(charge.reason) } : {}),
    amount: charge.amount,
    currency: charge.currency,
    captureMode: charge.captureMode,
  };
}
