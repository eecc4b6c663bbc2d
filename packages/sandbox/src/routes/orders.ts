import {
  cancelRequestSchema,
  captureRequestSchema,
  refundRequestSchema,
  safeParseFast,
  toCents,
} from "@purchase-auth/core";
import type { SandboxContext } from "../context.js";
import type { AuthorizationProcessor } from "../domain/authorization-processor.js";
import { errorResponse, reasonResponse, successResponse } from "../http/envelopes.js";
import type { ApiResponse } from "../http/types.js";
import {
  cancelOrder,
  captureOrder,
  type OrderRecord,
  type OrderWriteResult,
  refundOrder,
  toOrderResource,
} from "../state/orders.js";
import type { ServiceCall, ServiceRoute } from "./service-route.js";
import { validationFailure } from "./validation.js";

// Orders (supplement A). An order that is unknown or owned by another merchant is 404 with an empty
// errors array. Writes are applied before the 202 is sent; their body is optional JSON (`{}`).

export function getOrderRoute(ctx: SandboxContext): ServiceRoute {
  return {
    body: "none",
    idempotent: false,
    handle(call) {
      const order = ownedOrder(ctx, call);
      return order === undefined ? errorResponse(404) : successResponse(200, toOrderResource(order));
    },
  };
}

export function captureOrderRoute(ctx: SandboxContext, processor: AuthorizationProcessor): ServiceRoute {
  return orderWrite(ctx, (order, body) => {
    const parsed = safeParseFast(captureRequestSchema, body);
    if (!parsed.success) return validationFailure(parsed.error, body);
    const { amount, actionReference, description } = parsed.data;
    const result = captureOrder(order, amount === undefined ? undefined : toCents(amount), {
      at: ctx.clock.nowIso(),
      actionReference,
      description,
    });
    if (result.ok) processor.emitOrderEvent("order.captured", order, result.amountCents);
    return result;
  });
}

export function cancelOrderRoute(ctx: SandboxContext, processor: AuthorizationProcessor): ServiceRoute {
  return orderWrite(ctx, (order, body) => {
    const parsed = safeParseFast(cancelRequestSchema, body);
    if (!parsed.success) return validationFailure(parsed.error, body);
    const result = cancelOrder(order, {
      at: ctx.clock.nowIso(),
      actionReference: parsed.data.actionReference,
    });
    if (result.ok) {
      processor.releaseFunds(order.customerToken, result.amountCents);
      processor.emitOrderEvent("order.cancelled", order, result.amountCents);
    }
    return result;
  });
}

export function refundOrderRoute(ctx: SandboxContext, processor: AuthorizationProcessor): ServiceRoute {
  return orderWrite(ctx, (order, body) => {
    const parsed = safeParseFast(refundRequestSchema, body);
    if (!parsed.success) return validationFailure(parsed.error, body);
    const { amount, actionReference, description } = parsed.data;
    const result = refundOrder(order, toCents(amount), {
      at: ctx.clock.nowIso(),
      actionReference,
      description,
    });
    if (result.ok) {
      processor.releaseFunds(order.customerToken, result.amountCents);
      processor.emitOrderEvent("order.refunded", order, result.amountCents);
    }
    return result;
  });
}

/** Shared shape of the writes: 404 → body rules (400) → state rules (422) → 202 with Location. */
function orderWrite(
  ctx: SandboxContext,
  apply: (order: OrderRecord, body: unknown) => OrderWriteResult | ApiResponse,
): ServiceRoute {
  return {
    body: "optional_json",
    idempotent: true,
    handle(call) {
      const order = ownedOrder(ctx, call);
      if (order === undefined) return errorResponse(404);
      const result = apply(order, call.body);
      if ("status" in result) return result;
      if (!result.ok) return reasonResponse(422, result.reason);
      return { status: 202, headers: { location: `/manage/orders/${order.orderId}` } };
    },
  };
}

function ownedOrder(ctx: SandboxContext, call: ServiceCall): OrderRecord | undefined {
  const orderId = call.params.orderId;
  return orderId === undefined ? undefined : ctx.orders.owned(orderId, call.principal.merchantId);
}
