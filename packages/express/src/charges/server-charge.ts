import { type CaptureMode, captureModeSchema, isGuid } from "@purchase-auth/core";
import type { BuiltOrder, ResolvedCustomer, ResolvedOptions, Timing } from "../options.js";
import type { Authorizer } from "./authorizer.js";
import { type ChargedOrderResult, chargeOrder } from "./charge-order.js";
import type { Charges } from "./charges.js";
import { type ChargeView, chargeView } from "./view.js";

// `router.charge()`: a merchant-initiated charge from the server (a re-order, a renewal, an invoice
// run), with no browser and no session. It goes through the same path as POST /charges, so the
// charge lives in the same store, under the same keys, and webhooks and the reconciler move it on.

export interface ServerChargeInput {
  /** Whose stored token is charged: the app's customer id and the customer token (a GUID). */
  customer: ResolvedCustomer;
  /** The order the server built; its `reference` identifies the charge (one reference, one charge). */
  order: BuiltOrder;
  /** Default: the router's `captureMode`. */
  captureMode?: CaptureMode;
  /** Default "now" (one synchronous attempt). */
  timing?: Timing;
  /** With timing "scheduled": the name of an entry of the router's `schedules`. */
  schedule?: string;
}

export interface ServerChargeResult {
  charge: ChargeView;
  /** True when this call started an attempt; false when it answered an existing charge. */
  started: boolean;
}

const TIMINGS: readonly Timing[] = ["now", "asap", "scheduled"];

/** Checks the input before anything is stored or sent: a wrong field throws a TypeError naming it. */
function checked(input: ServerChargeInput, options: ResolvedOptions) {
  const { customer } = input ?? {};
  if (typeof customer?.customerId !== "string" || customer.customerId === "") {
    throw new TypeError("customer.customerId must be a non-empty string");
  }
  if (typeof customer.customerToken !== "string" || !isGuid(customer.customerToken)) {
    throw new TypeError("customer.customerToken must be a customer token (a GUID)");
  }
  const captureMode = input.captureMode ?? options.captureMode;
  if (!captureModeSchema.safeParse(captureMode).success) {
    throw new TypeError('captureMode must be "Auto" or "Manual"');
  }
  const timing = input.timing ?? "now";
  if (!TIMINGS.includes(timing)) throw new TypeError(`timing must be one of ${TIMINGS.join(", ")}`);
  if (timing !== "scheduled") {
    if (input.schedule !== undefined)
      throw new TypeError('schedule is only accepted with timing "scheduled"');
    return { customer, order: input.order, captureMode, timing };
  }
  const name = input.schedule ?? options.schedule;
  if (name === undefined || !Object.hasOwn(options.schedules, name)) {
    throw new TypeError(
      `schedule must name an entry of the router's schedules (${Object.keys(options.schedules).join(", ")})`,
    );
  }
  return { customer, order: input.order, captureMode, timing, schedule: options.schedules[name]! };
}

export async function serverCharge(
  deps: { options: ResolvedOptions; charges: Charges; authorizer: Authorizer },
  input: ServerChargeInput,
): Promise<ServerChargeResult> {
  const result: ChargedOrderResult = await chargeOrder(deps, checked(input, deps.options));
  return { charge: chargeView(result.charge), started: result.started };
}
