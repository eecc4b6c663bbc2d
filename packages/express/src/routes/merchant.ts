import { createHash } from "node:crypto";
import {
  decimalStringOf,
  InvalidRequestError,
  idempotencyKeyIn,
  isGuid,
  NotFoundError,
  type Order,
  OrderStateError,
  type OrderStatus,
  positiveAmountSchema,
  type WriteOptions,
} from "@purchase-auth/core";
import type { RequestHandler, Response } from "express";
import { z } from "zod";
import { isPastIdempotencyWindow } from "../charges/authorizer.js";
import { type ChargeNews, operationId } from "../charges/state-machine.js";
import { chargeView } from "../charges/view.js";
import { asyncHandler } from "../http/async-handler.js";
import { readJsonBody } from "../http/body.js";
import { chargeNotFound, requireMerchant } from "../http/guards.js";
import { answerJson } from "../http/json-answer.js";
import { withTimeout } from "../http/timeout.js";
import { problem } from "../problems.js";
import type { ChargeRecord, MerchantOperation, OperationRecord } from "../stores/types.js";
import type { RouteContext } from "./context.js";

// POST /charges/:authorizationId/capture | cancel | refund, for merchants only (authorizeMerchant,
// default deny). Each write carries a key derived from the reference, the operation and a sequence
// number (given by the caller, or counted by the store), so a retried request never captures or
// refunds twice; a capture of the rest or a cancel the service finds already done counts as done.

/** An exact amount: a decimal string, or a number that is exactly one (never rounded). */
const amountField = z.preprocess(
  (value) => (typeof value === "number" ? (decimalStringOf(value) ?? String(value)) : value),
  positiveAmountSchema,
);

/**
 * The caller's name for one operation: the n-th capture (a number), or any id the back office
 * chose for this button press (a UUID, say). Sent again, it names the same operation: same key.
 */
const sequenceField = z.union([
  z.number().int().min(1).max(1_000_000),
  z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9._:-]+$/, "sequence may contain only letters, digits and . _ : -")
    // "5" and 5 make the same key: one operation, one log entry, whichever form a retry sends.
    .transform((value) => (NUMBERED.test(value) && Number(value) <= 1_000_000 ? Number(value) : value)),
]);

/** A whole number from 1 written as JSON writes it (no sign, no leading zero). */
const NUMBERED = /^[1-9][0-9]*$/;

const BODY_SCHEMAS = {
  capture: z.object({ amount: amountField.optional(), sequence: sequenceField.optional() }),
  cancel: z.object({ sequence: sequenceField.optional() }),
  refund: z.object({ amount: amountField, sequence: sequenceField.optional() }),
} as const;

/**
 * Writes that move a chosen amount need the caller's `sequence`: counted by the router, a click
 * whose answer was lost would be sent again under a new key and move the amount twice. Capture of
 * everything and cancel are naturally idempotent at the service and may go without.
 */
function requiresSequence(operation: MerchantOperation, body: { amount?: string }): boolean {
  return operation === "refund" || (operation === "capture" && body.amount !== undefined);
}

/**
 * Order statuses in which a write that names no amount (capture the rest, cancel) has nothing left
 * to do, so a retry that finds them succeeded. A write with an amount (a partial capture, a refund)
 * never does: its own key would replay its success, so a refusal means it moved nothing.
 */
const ALREADY_DONE: Record<"capture" | "cancel", ReadonlyArray<OrderStatus>> = {
  capture: ["Activated", "PartReturned", "Returned"],
  cancel: ["Cancelled", "Expired", "Activated", "PartReturned", "Returned"],
};

/** True when the order shows that the write `operation` (with `amount` or without) has nothing left to do. */
function hasNothingLeftToDo(operation: MerchantOperation, amount: string | undefined, order: Order): boolean {
  if (amount !== undefined || operation === "refund") return false;
  return ALREADY_DONE[operation].includes(order.status);
}

export function merchantRoute(ctx: RouteContext, operation: MerchantOperation): RequestHandler {
  const { options, charges } = ctx;
  const { client, store } = options;
  const schema = BODY_SCHEMAS[operation];
  const fields = Object.keys(schema.shape);

  return asyncHandler(async (req, res) => {
    await requireMerchant(req, options);
    const body = readJsonBody(req, schema, fields) as { amount?: string; sequence?: number | string };
    if (body.sequence === undefined && requiresSequence(operation, body)) {
      const message = `sequence is required for ${operation === "refund" ? "a refund" : "a capture with an amount"}: a number or id the caller chooses per operation and sends again with any retry of it`;
      throw problem("invalid-body", 400, "Invalid request body", message, {
        errors: [{ field: "sequence", message }],
      });
    }
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

    // Write-ahead: the operation is recorded, and its sequence number reserved, before it is sent.
    // A crash after the send can then never hand the same number to another body.
    const sequence = body.sequence ?? charge.operations[operation] + 1;
    const fingerprint = operationFingerprint(operation, body.amount);
    const id = operationId(operation, sequence);
    const write = { sequence, fingerprint, amount: body.amount };
    const at = new Date(options.now()).toISOString();
    const { charge: recorded, created } = await charges.recordWrite(
      charge.reference,
      operationNews(sequence, fingerprint, "sent", at),
    );
    const entry = (recorded ?? charge).operationLog?.[id];
    if (entry !== undefined && entry.fingerprint !== fingerprint) {
      throw problem(
        "sequence-reused",
        409,
        "Sequence already used",
        `${operation} sequence ${sequence} was already used for another amount; send a new sequence for a new ${operation}.`,
      );
    }
    /** Recorded by an earlier request: its key may have reached the service before. */
    const sentBefore = !created;
    if (entry !== undefined && sentBefore && movesAnAmount(body.amount) && !mayResend(entry)) {
      // The service may have forgotten the key: sent again, it would be a new write, and could
      // capture or refund twice. The log answers instead.
      await answerFromLog(res, recorded ?? charge, write);
      return;
    }
    const idempotencyKey = idempotencyKeyIn(
      options.idempotencyNamespace,
      charge.reference,
      operation,
      charge.attempt,
      sequence,
    );
    // One timeout for the write and the read after it; its timer is cleared once they are done.
    const result = await withTimeout(options.timeoutMs, async (signal) => {
      const write: WriteOptions = { idempotencyKey, signal };
      // Told when the key was first sent, core never sends it past the window by its own clock: the
      // entry's age on the router's clock (`now`, which tests move), as a time on the client's.
      if (sentBefore && entry?.firstSentAt !== undefined) {
        const age = Math.max(0, options.now() - Date.parse(entry.firstSentAt));
        write.firstSentAt = new Date(Date.now() - age);
      }
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
      } catch (error) {
        // The service (or core, by its own clock) says the key is past its window: unknowable now.
        if (isPastIdempotencyWindow(error)) return PAST_WINDOW;
        if (!OrderStateError.isInstance(error) || error.reason !== "INVALID_ORDER_STATE") {
          // A definite refusal is stored by the service under this key: recorded, so the next
          // operation takes the next number and is not blocked by it.
          if (isDefiniteRefusal(error)) {
            await charges.apply(charge.reference, operationNews(sequence, fingerprint, "refused"));
          }
          throw error;
        }
        const order = await readOrder(orderId, signal);
        if (!hasNothingLeftToDo(operation, body.amount, order)) {
          await charges.apply(
            charge.reference,
            operationNews(sequence, fingerprint, "refused"),
            orderNews(charge.authorizationId!, order),
          );
          throw error;
        }
        return { order, outcome: "already_done" as const };
      }
      // The service's amounts are the truth; the write's answer carries none (supplement A). Read
      // outside the catch: a failed read says nothing about the write.
      return { order: await readOrder(orderId, signal), outcome: "done" as const };
    });
    if (result === PAST_WINDOW) {
      // What the log knows now (another request may have learnt the answer meanwhile).
      await answerFromLog(res, (await store.findByReference(charge.reference)) ?? charge, write);
      return;
    }
    const { order, outcome } = result;
    if (!orderShows(operation, body.amount, order)) {
      // The key answered, but the order does not show the write (the answer of another body under
      // this key): never "done" when the money did not move.
      await charges.apply(charge.reference, orderNews(charge.authorizationId!, order));
      throw notApplied();
    }
    const updated = await charges.apply(
      charge.reference,
      operationNews(sequence, fingerprint, "done"),
      orderNews(charge.authorizationId!, order),
    );
    answerOperation(res, updated ?? charge, operation, sequence, outcome, order);
  });

  /** True while the entry's key may still be sent: inside the window the service remembers it. */
  function mayResend(entry: OperationRecord): boolean {
    if (entry.state === "unconfirmed" || entry.firstSentAt === undefined) return false;
    return options.now() - Date.parse(entry.firstSentAt) < options.resendWindowMs;
  }

  /**
   * Answers a write whose key may no longer be sent, from what the operation log and the order
   * know. A write without an amount (capture of the rest, cancel) is told by the order: done when
   * nothing is left to do, else not applied (send it with a new sequence). A write with an amount:
   * done or refused as recorded; otherwise unknown for good: recorded unconfirmed, never sent
   * again, and an alert (raised before it is recorded, so a crash repeats it rather than loses it).
   */
  async function answerFromLog(
    res: Response,
    charge: ChargeRecord,
    write: { sequence: number | string; fingerprint: string; amount: string | undefined },
  ): Promise<void> {
    const { sequence, fingerprint, amount } = write;
    const entry = charge.operationLog?.[operationId(operation, sequence)];
    if (!movesAnAmount(amount) || entry?.state === "done") {
      const order = await withTimeout(options.timeoutMs, (signal) => readOrder(charge.orderId!, signal));
      const news = orderNews(charge.authorizationId!, order);
      if (entry?.state === "done") {
        const updated = await charges.apply(charge.reference, news);
        answerOperation(res, updated ?? charge, operation, sequence, "done", order);
        return;
      }
      if (!hasNothingLeftToDo(operation, amount, order)) {
        await charges.apply(charge.reference, news);
        throw notApplied();
      }
      const updated = await charges.apply(
        charge.reference,
        operationNews(sequence, fingerprint, "done"),
        news,
      );
      answerOperation(res, updated ?? charge, operation, sequence, "already_done", order);
      return;
    }
    if (entry?.state === "refused") {
      throw problem(
        "operation-refused",
        409,
        "Refused earlier",
        `The service refused this ${operation} (sequence ${sequence}); send a new sequence for a new ${operation}.`,
      );
    }
    if (entry?.state !== "unconfirmed") {
      await ctx.alert({
        kind: "needs_review",
        reference: charge.reference,
        authorizationId: charge.authorizationId!,
        orderId: charge.orderId!,
        message: `the outcome of ${operation} ${sequence} stayed unknown past the service's idempotency window, so its key is never sent again; compare the order's amounts at the service with your back office before another ${operation}`,
      });
      const after = await charges.apply(
        charge.reference,
        operationNews(sequence, fingerprint, "unconfirmed"),
      );
      // A send made inside the window may have learnt the answer meanwhile: that answer stands.
      const settled = after?.operationLog?.[operationId(operation, sequence)]?.state;
      if (settled === "done" || settled === "refused") return answerFromLog(res, after!, write);
    }
    throw problem(
      "operation-unconfirmed",
      409,
      "Outcome unknown",
      `Whether this ${operation} (sequence ${sequence}) went through is unknown, and it can no longer be sent safely; check the order at the service before another ${operation}.`,
      { retryable: false },
    );
  }

  /** A partial capture or a refund: sent twice, it would move its amount twice. */
  function movesAnAmount(amount: string | undefined): boolean {
    return amount !== undefined || operation === "refund";
  }

  function notApplied() {
    return problem(
      "operation-not-applied",
      409,
      "Not applied",
      `The service's order does not show this ${operation}; send it again with a new sequence.`,
    );
  }

  function operationNews(
    sequence: number | string,
    fingerprint: string,
    state: OperationRecord["state"],
    at?: string,
  ): OperationNews {
    const news: OperationNews = { kind: "operation", operation, sequence, fingerprint, state };
    if (at !== undefined) news.at = at;
    return news;
  }

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

type OperationNews = Extract<ChargeNews, { kind: "operation" }>;

/** What the write's call returns when the service or core says its key is past its window. */
const PAST_WINDOW = Symbol("past the idempotency window");

/** 200 with the charge, the operation and the service's order as re-read after the write. */
function answerOperation(
  res: Response,
  charge: ChargeRecord,
  operation: MerchantOperation,
  sequence: number | string,
  outcome: "done" | "already_done",
  order: Order,
): void {
  answerJson(res, 200, {
    ...chargeView(charge),
    operation: { name: operation, sequence, outcome },
    order: {
      status: order.status,
      totalAmount: order.totalAmount,
      capturedAmount: order.capturedAmount,
      refundedAmount: order.refundedAmount,
      cancelledAmount: order.cancelledAmount,
    },
  });
}

/** What one write moves: the same sequence with another fingerprint is another write. */
export function operationFingerprint(operation: MerchantOperation, amount: string | undefined): string {
  return createHash("sha256")
    .update(`${operation}|${amount ?? "all"}`)
    .digest("hex");
}

/**
 * Whether the service's order shows the write: everything captured after "capture the rest",
 * nothing left reserved after a cancel. A partial capture or a refund answered 202 under its own
 * key moved its amount (a key never carries another body: the sequence is reserved first).
 */
function orderShows(operation: MerchantOperation, amount: string | undefined, order: Order): boolean {
  if (operation === "refund" || amount !== undefined) return true;
  return hasNothingLeftToDo(operation, amount, order);
}

/** The service answered, and refused: nothing moved, and the key now holds that refusal. */
function isDefiniteRefusal(error: unknown): boolean {
  return OrderStateError.isInstance(error) || InvalidRequestError.isInstance(error);
}

function orderNews(authorizationId: string, order: Order) {
  return { kind: "order", authorizationId, orderId: order.orderId, orderStatus: order.status } as const;
}
