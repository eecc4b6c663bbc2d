import {
  decimalStringOf,
  idempotencyKeyIn,
  isGuid,
  NotFoundError,
  type Order,
  OrderStateError,
  type OrderStatus,
  positiveAmountSchema,
} from "@purchase-auth/core";
import type { RequestHandler } from "express";
import { z } from "zod";
import { chargeView } from "../charges/view.js";
import { asyncHandler } from "../http/async-handler.js";
import { readJsonBody } from "../http/body.js";
import { chargeNotFound, requireMerchant } from "../http/guards.js";
import { withTimeout } from "../http/timeout.js";
import { problem } from "../problems.js";
import type { MerchantOperation } from "../stores/types.js";
import type { RouteContext } from "./context.js";

// POST /charges/:authorizationId/capture | cancel | refund, for merchants only (authorizeMerchant,
// default deny). Each write carries a key derived from the reference, the operation and a sequence
// number (given by the caller, or counted by the store), so a retried request never captures or
// refunds twice; a write the service says is already done counts as done.

/** An exact amount: a decimal string, or a number that is exactly one (never rounded). */
const amountField = z.preprocess(
  (value) => (typeof value === "number" ? (decimalStringOf(value) ?? String(value)) : value),
  positiveAmountSchema,
);

const sequenceField = z.number().int().min(1).max(1_000_000);

const BODY_SCHEMAS = {
  capture: z.object({ amount: amountField.optional(), sequence: sequenceField.optional() }),
  cancel: z.object({ sequence: sequenceField.optional() }),
  refund: z.object({ amount: amountField, sequence: sequenceField.optional() }),
} as const;

/** Order statuses in which the operation has nothing left to do: a retry that finds them succeeded. */
const ALREADY_DONE: Record<MerchantOperation, ReadonlyArray<OrderStatus>> = {
  capture: ["Activated", "PartReturned", "Returned"],
  cancel: ["Cancelled", "Expired", "Activated", "PartReturned", "Returned"],
  refund: ["Returned"],
};

export function merchantRoute(ctx: RouteContext, operation: MerchantOperation): RequestHandler {
  const { options, charges } = ctx;
  const { client, store } = options;
  const schema = BODY_SCHEMAS[operation];
  const fields = Object.keys(schema.shape);

  return asyncHandler(async (req, res) => {
    await requireMerchant(req, options);
    const body = readJsonBody(req, schema, fields) as { amount?: string; sequence?: number };
    const authorizationId = String(req.params.authorizationId);
    const charge = isGuid(authorizationId) ? await store.findByAuthorizationId(authorizationId) : undefined;
    if (!charge) throw chargeNotFound();
    const { orderId } = charge;
    if (orderId === undefined) {
      throw problem(
        "no-order",
        409,
        "Not authorized yet",
        `This payment has no authorized order yet, so there is nothing to ${operation}.`,
      );
    }

    const sequence = body.sequence ?? charge.operations[operation] + 1;
    const idempotencyKey = idempotencyKeyIn(
      options.idempotencyNamespace,
      charge.reference,
      operation,
      charge.attempt,
      sequence,
    );
    // One timeout for the write and the read after it; its timer is cleared once they are done.
    const { order, outcome } = await withTimeout(options.timeoutMs, async (signal) => {
      const write = { idempotencyKey, signal };
      try {
        if (operation === "capture") {
          await client.orders.capture(
            orderId,
            body.amount === undefined ? {} : { amount: body.amount },
            write,
          );
        } else if (operation === "cancel") {
          await client.orders.cancel(orderId, {}, write);
        } else {
          await client.orders.refund(orderId, { amount: body.amount! }, write);
        }
        // The service's amounts are the truth; the write's answer carries none (supplement A).
        return { order: await readOrder(orderId, signal), outcome: "done" as const };
      } catch (error) {
        if (!OrderStateError.isInstance(error) || error.reason !== "INVALID_ORDER_STATE") throw error;
        const order = await readOrder(orderId, signal);
        if (!ALREADY_DONE[operation].includes(order.status)) {
          await charges.apply(charge.reference, orderNews(charge.authorizationId!, order));
          throw error;
        }
        return { order, outcome: "already_done" as const };
      }
    });
    const updated = await charges.apply(
      charge.reference,
      { kind: "operation", operation, sequence },
      orderNews(charge.authorizationId!, order),
    );
    res.status(200).json({
      ...chargeView(updated ?? charge),
      operation: { name: operation, sequence, outcome },
      order: {
        status: order.status,
        totalAmount: order.totalAmount,
        capturedAmount: order.capturedAmount,
        refundedAmount: order.refundedAmount,
        cancelledAmount: order.cancelledAmount,
      },
    });
  });

  async function readOrder(orderId: string, signal: AbortSignal): Promise<Order> {
    try {
      return await client.orders.get(orderId, { signal });
    } catch (error) {
      if (!NotFoundError.isInstance(error)) throw error;
      throw problem(
        "not-found",
        404,
        "Order not found",
        "The payment's order could not be found at the service.",
      );
    }
  }
}

function orderNews(authorizationId: string, order: Order) {
  return { kind: "order", authorizationId, orderId: order.orderId, orderStatus: order.status } as const;
}
