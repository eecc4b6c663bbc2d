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
  // Field by field, in the order of the JSON answer (conditional object spreads cost more than the
  // rest of the view).
  const view = {} as ChargeView;
  if (charge.authorizationId !== undefined) view.authorizationId = charge.authorizationId;
  view.reference = charge.reference;
  view.status = charge.status;
  if (charge.orderId !== undefined) view.orderId = charge.orderId;
  if (charge.status === "failed") {
    if (charge.reason !== undefined) view.reason = charge.reason;
    view.message = shopperMessageFor(charge.reason);
  }
  view.amount = charge.amount;
  view.currency = charge.currency;
  view.captureMode = charge.captureMode;
  return view;
}
