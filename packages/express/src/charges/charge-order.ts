import {
  type AttemptScheduleInput,
  type AuthorizationRequest,
  type AuthorizationRequestInput,
  type CaptureMode,
  checkAuthorizationRequest,
  formatCents,
  orderTotalCents,
} from "@purchase-auth/core";
import type { BuiltOrder, ResolvedCustomer, ResolvedOptions, Timing } from "../options.js";
import { OrderBuildError, problem } from "../problems.js";
import type { ChargeRecord, PendingAuthorization } from "../stores/types.js";
import type { Authorizer } from "./authorizer.js";
import type { Charges } from "./charges.js";
import { failedNotDelivered, nothingReached } from "./create-sends.js";
import { orderFingerprint } from "./order-fingerprint.js";

// Charging one order of one customer, whoever asks: the shopper's POST /charges or the server's
// `router.charge()` (a re-order, a renewal, an invoice). Either way the charge is stored under the
// order reference with a write-ahead record of its create call before anything is sent, its keys
// bind reference, customer token and attempt, and webhooks and the reconciler move it on.

export interface OrderToCharge {
  customer: ResolvedCustomer;
  order: BuiltOrder;
  captureMode: CaptureMode;
  timing: Timing;
  /** The relative delays of a "scheduled" timing. */
  schedule?: ReadonlyArray<string>;
}

export interface ChargedOrderResult {
  charge: ChargeRecord;
  /** True when this call started an attempt (a new charge, or a new attempt after a failure). */
  started: boolean;
}

interface Deps {
  options: ResolvedOptions;
  charges: Charges;
  authorizer: Authorizer;
}

/**
 * Charges `order` for `customer`, at most once per attempt: an existing charge of the reference is
 * answered as it is (paid, pending with a known authorization, under review), resent with its key
 * when its answer is unknown, or tried anew after a definite failure. Throws what the service
 * answered (a decline is recorded on the charge first; an unknown outcome leaves it pending for the
 * same key), and a 409 problem when the reference belongs to another customer or another order.
 */
export async function chargeOrder(deps: Deps, input: OrderToCharge): Promise<ChargedOrderResult> {
  const { options, charges, authorizer } = deps;
  const { store } = options;
  const { customer } = input;
  const request = authorizationRequestFor(input);
  const reference = request.order.reference!;
  const amount = formatCents(orderTotalCents(request.order.items) ?? 0n);
  const order = {
    amount,
    currency: request.order.currency,
    captureMode: input.captureMode,
    orderFingerprint: orderFingerprint(request, amount),
  };

  // Write-ahead: the attempt's exact request and key are stored before anything is sent.
  const pending = authorizer.pendingFor(request, reference, 1);
  const { charge: stored, created } = await store.create(newCharge(reference, customer, order, pending));
  if (stored.customerId !== customer.customerId) {
    // A reference identifies one customer's order; the app built the same one for someone else.
    throw problem("conflict", 409, "Order conflict", "This order cannot be paid from your account.");
  }
  let charge = stored;
  /** True when this call created the charge or started its current attempt: nobody sent it before. */
  let startsAttempt = created;
  if (charge.status === "failed") {
    // The previous attempt definitely failed: a new attempt, with the next key, for the order as
    // built now. (If another request started it first, it must be for the same order.)
    const next = {
      ...order,
      pendingAuthorization: (attempt: number) => authorizer.pendingFor(request, reference, attempt),
    };
    const nextAttempt = await charges.startNextAttempt(reference, next);
    charge = nextAttempt.charge ?? charge;
    startsAttempt = nextAttempt.started;
    if (charge.status !== "failed") assertSameOrder(charge, order);
    // Another request started (and perhaps finished) that attempt while this one waited for the
    // store: it is theirs to send. Sending it from here could use a key its record no longer holds.
    if (charge.authorizationId !== undefined || charge.status === "needs_review") {
      return { charge, started: false };
    }
  } else {
    // Paid, or an attempt whose answer is not known yet: only the same order may be answered with
    // it or resent with its key (a resend with another body could charge what nobody checked).
    assertSameOrder(charge, order);
    if (!created && (charge.authorizationId !== undefined || charge.status === "needs_review")) {
      // A double click or a repeated request: the charge that exists, not a new one. A charge
      // under review is never sent again: its key may be forgotten by the service.
      return { charge, started: false };
    }
  }
  // A new charge, or one whose create call has no known answer yet (a crash, a timeout, or a
  // concurrent click): sent with the attempt's key, so the service performs it at most once.
  const updated = await authorizer.send(charge, request, startsAttempt ? "first" : "resend");
  const readUnanswered = charge.status === "pending";
  if (!startsAttempt && readUnanswered && updated.attempt === charge.attempt && failedNotDelivered(updated)) {
    // A repeat that read the attempt unanswered, while the request that sent it learnt that the
    // send reached nothing (the charge failed; that request answered "nothing happened, try
    // again"): answered the same, so the shopper's next try is the new attempt, not a "failed".
    throw nothingReached();
  }
  return { charge: updated, started: startsAttempt };
}

type ChargedOrder = Pick<ChargeRecord, "amount" | "currency" | "captureMode"> & { orderFingerprint: string };

/** Refuses a request whose rebuilt order is not the one the charge's attempt was created for. */
function assertSameOrder(charge: ChargeRecord, order: ChargedOrder): void {
  const same =
    charge.orderFingerprint === undefined
      ? // A charge stored before fingerprints existed: compare what it kept.
        charge.amount === order.amount &&
        charge.currency === order.currency &&
        charge.captureMode === order.captureMode
      : charge.orderFingerprint === order.orderFingerprint;
  if (!same) {
    throw problem(
      "order-changed",
      409,
      "Order changed",
      "Your cart changed since you paid. Please review your order.",
    );
  }
}

/** The create request for the order, checked by core before anything is stored. */
function authorizationRequestFor(input: OrderToCharge): AuthorizationRequest {
  const { customer, order } = input;
  if (typeof order?.reference !== "string" || order.reference.trim() === "") {
    throw new TypeError("the order needs a reference (the app's order id, ≤ 50 chars)");
  }
  // Optional fields set only when present (spread in, each costs an empty object and a copy). Core
  // writes the wire form in its own order, whatever the order here.
  const orderInput: AuthorizationRequestInput["order"] = {
    items: order.items,
    currency: order.currency,
    reference: order.reference,
    captureMode: input.captureMode,
  };
  if (order.actionReference !== undefined) orderInput.actionReference = order.actionReference;
  if (order.settlementReference !== undefined) orderInput.settlementReference = order.settlementReference;
  const candidate: AuthorizationRequestInput = { customerToken: customer.customerToken, order: orderInput };
  if (order.storeId !== undefined) candidate.storeId = order.storeId;
  const schedule = attemptSchedule(input);
  if (schedule !== undefined) candidate.attemptSchedule = schedule;
  const checked = checkAuthorizationRequest(candidate);
  // What the app built is the app's code, not the shopper's input: a bug to log, not a 400.
  if (!checked.success) throw new OrderBuildError(checked.issues);
  return checked.request;
}

function attemptSchedule(input: OrderToCharge): AttemptScheduleInput | undefined {
  switch (input.timing) {
    case "now":
      return { preferSynchronous: true };
    case "asap":
      return undefined;
    case "scheduled":
      return { relative: [...(input.schedule ?? [])] };
  }
}

function newCharge(
  reference: string,
  customer: ResolvedCustomer,
  order: ChargedOrder,
  pendingAuthorization: PendingAuthorization,
): ChargeRecord {
  // Created when its create call is recorded, on the router's clock.
  const now = pendingAuthorization.firstSentAt;
  return {
    reference,
    customerId: customer.customerId,
    attempt: 1,
    status: "pending",
    amount: order.amount,
    currency: order.currency,
    captureMode: order.captureMode,
    orderFingerprint: order.orderFingerprint,
    pendingAuthorization,
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}
