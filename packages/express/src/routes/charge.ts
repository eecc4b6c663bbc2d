import { captureModeSchema } from "@purchase-auth/core";
import type { RequestHandler } from "express";
import { z } from "zod";
import { chargeOrder, type OrderToCharge } from "../charges/charge-order.js";
import { chargeView } from "../charges/view.js";
import { asyncHandler } from "../http/async-handler.js";
import { readJsonBody } from "../http/body.js";
import { isThenable, requireCustomer } from "../http/guards.js";
import { answerJson } from "../http/json-answer.js";
import type { BuiltOrder, ChargeInput, ResolvedOptions } from "../options.js";
import { problem } from "../problems.js";
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
  const { options } = ctx;

  return asyncHandler(async (req, res) => {
    const input = chargeInput(readJsonBody(req, chargeBodySchema, CHARGE_FIELDS), options);
    // The app's hooks are awaited only when they return promises: one microtask hop less each.
    const found = requireCustomer(req, options);
    const customer = isThenable(found) ? await found : found;
    const built = options.buildOrder(req, input);
    const order: BuiltOrder = isThenable(built) ? await built : built;
    const toCharge: OrderToCharge = { customer, order, captureMode: input.captureMode, timing: input.timing };
    if (input.schedule !== undefined) toCharge.schedule = options.schedules[input.schedule]!;
    const { charge, started } = await chargeOrder(ctx, toCharge);
    answerJson(res, started ? 201 : 200, chargeView(charge));
  });
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
