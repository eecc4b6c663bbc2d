import { createHash } from "node:crypto";
import {
  type AttemptScheduleInput,
  type AuthorizationRequest,
  type AuthorizationRequestInput,
  captureModeSchema,
  checkAuthorizationRequest,
  formatCents,
  orderTotalCents,
} from "@purchase-auth/core";
import type { Request, RequestHandler } from "express";
import { z } from "zod";
import { chargeView } from "../charges/view.js";
import { asyncHandler } from "../http/async-handler.js";
import { readJsonBody } from "../http/body.js";
import { requireCustomer } from "../http/guards.js";
import type { BuiltOrder, ChargeInput, ResolvedCustomer, ResolvedOptions } from "../options.js";
import { OrderBuildError, problem } from "../problems.js";
import type { ChargeRecord, PendingAuthorization } from "../stores/types.js";
import type { RouteContext } from "./context.js";

// POST /charges: the browser names its cart and, where the app allows, a capture mode and timing.
// Who pays comes from the app's session (resolveCustomer), what is charged from the app's cart
// (buildOrder); the idempotency key comes from the order reference, so a double click or a retried
// request charges once.

const chargeBodySchema = z.object({
  cartId: z.string().trim().min(1).max(200),
  captureMode: captureModeSchema.optional(),
  timing: z.enum(["now", "asap", "scheduled"]).optional(),
  schedule: z.string().min(1).max(50).optional(),
});

const CHARGE_FIELDS = Object.keys(chargeBodySchema.shape);

type ChargeBody = z.output<typeof chargeBodySchema>;

export function chargeRoute(ctx: RouteContext): RequestHandler {
  const { options, charges, authorizer } = ctx;
  const { store } = options;

  return asyncHandler(async (req, res) => {
    const input = chargeInput(readJsonBody(req, chargeBodySchema, CHARGE_FIELDS), options);
    const customer = await requireCustomer(req, options);
    const request = await authorizationRequest(req, customer, input, options);
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
    if (charge.status === "failed") {
      // The previous attempt definitely failed: a new attempt, with the next key, for the order as
      // built now. (If another request started it first, it must be for the same order.)
      const next = {
        ...order,
        pendingAuthorization: (attempt: number) => authorizer.pendingFor(request, reference, attempt),
      };
      charge = (await charges.startNextAttempt(reference, next)) ?? charge;
      if (charge.status !== "failed") assertSameOrder(charge, order);
    } else {
      // Paid, or an attempt whose answer is not known yet: only the same order may be answered with
      // it or resent with its key (a resend with another body could charge what nobody checked).
      assertSameOrder(charge, order);
      if (!created && (charge.authorizationId !== undefined || charge.status === "needs_review")) {
        // A double click or a repeated request: the charge that exists, not a new one. A charge
        // under review is never sent again: its key may be forgotten by the service.
        res.status(200).json(chargeView(charge));
        return;
      }
    }
    // A new charge, or one whose create call has no known answer yet (a crash, a timeout, or a
    // concurrent click): sent with the attempt's key, so the service performs it at most once.
    const startsAttempt = created || charge.attempt > stored.attempt;
    const updated = await authorizer.send(charge, request);
    res.status(startsAttempt ? 201 : 200).json(chargeView(updated));
  });
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

/**
 * A hash of what the create call charges: amount, currency, capture mode, store and the items
 * (as checked by core), with object keys sorted so that equal orders hash equally.
 */
function orderFingerprint(request: AuthorizationRequest, amount: string): string {
  const { order } = request;
  const canonical = canonicalJson({
    amount,
    currency: order.currency,
    captureMode: order.captureMode ?? null,
    storeId: request.storeId ?? null,
    items: order.items,
  });
  return createHash("sha256").update(canonical, "utf8").digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The browser's choices, checked against what the app allows. */
function chargeInput(body: ChargeBody, options: ResolvedOptions): ChargeInput {
  const captureMode = body.captureMode ?? options.captureMode;
  if (!options.allowedCaptureModes.includes(captureMode)) {
    throw notAllowed("captureMode", options.allowedCaptureModes);
  }
  const timing = body.timing ?? options.timing;
  if (!options.allowedTimings.includes(timing)) throw notAllowed("timing", options.allowedTimings);
  if (timing !== "scheduled") {
    if (body.schedule !== undefined) throw notAllowed("schedule", []);
    return { cartId: body.cartId, captureMode, timing };
  }
  const schedule = body.schedule ?? options.schedule;
  if (schedule === undefined) {
    throw invalidField("schedule", `schedule is required with timing "scheduled"`);
  }
  if (!Object.hasOwn(options.schedules, schedule)) {
    throw notAllowed("schedule", Object.keys(options.schedules));
  }
  return { cartId: body.cartId, captureMode, timing, schedule };
}

function notAllowed(field: string, allowed: readonly string[]) {
  const message =
    allowed.length === 0 ? `${field} is not accepted here` : `${field} must be one of ${allowed.join(", ")}`;
  return invalidField(field, message);
}

function invalidField(field: string, message: string) {
  return problem("invalid-body", 400, "Invalid request body", message, { errors: [{ field, message }] });
}

/** The create request, from the app's customer and order; checked before anything is stored. */
async function authorizationRequest(
  req: Request,
  customer: ResolvedCustomer,
  input: ChargeInput,
  options: ResolvedOptions,
): Promise<AuthorizationRequest> {
  const order: BuiltOrder = await options.buildOrder(req, input);
  if (typeof order?.reference !== "string" || order.reference.trim() === "") {
    throw new TypeError("buildOrder must return an order with a reference (the app's order id, ≤ 50 chars)");
  }
  const schedule = attemptSchedule(input, options);
  const candidate: AuthorizationRequestInput = {
    customerToken: customer.customerToken,
    ...(order.storeId === undefined ? {} : { storeId: order.storeId }),
    order: {
      items: order.items,
      currency: order.currency,
      reference: order.reference,
      ...(order.actionReference === undefined ? {} : { actionReference: order.actionReference }),
      ...(order.settlementReference === undefined ? {} : { settlementReference: order.settlementReference }),
      captureMode: input.captureMode,
    },
    ...(schedule === undefined ? {} : { attemptSchedule: schedule }),
  };
  const checked = checkAuthorizationRequest(candidate);
  // What buildOrder built is the app's code, not the shopper's input: a bug to log, not a 400.
  if (!checked.success) throw new OrderBuildError(checked.issues);
  return checked.request;
}

function attemptSchedule(input: ChargeInput, options: ResolvedOptions): AttemptScheduleInput | undefined {
  switch (input.timing) {
    case "now":
      return { preferSynchronous: true };
    case "asap":
      return undefined;
    case "scheduled":
      return { relative: [...options.schedules[input.schedule!]!] };
  }
}

function newCharge(
  reference: string,
  customer: ResolvedCustomer,
  order: ChargedOrder,
  pendingAuthorization: PendingAuthorization,
): ChargeRecord {
  const now = new Date().toISOString();
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
