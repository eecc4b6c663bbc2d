import { decimalStringOf, isGuid, type Order, positiveAmountSchema } from "@purchase-auth/core";
import type { RequestHandler, Response } from "express";
import { z } from "zod";
import {
  type MerchantWrite,
  operationFingerprint,
  operationNews,
  type WriteResult,
} from "../charges/merchant-writes.js";
import { operationId } from "../charges/state-machine.js";
import { chargeView } from "../charges/view.js";
import { asyncHandler } from "../http/async-handler.js";
import { readJsonBody } from "../http/body.js";
import { chargeNotFound, requireMerchant } from "../http/guards.js";
import { answerJson } from "../http/json-answer.js";
import { problem } from "../problems.js";
import type { ChargeRecord, MerchantOperation } from "../stores/types.js";
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

export function merchantRoute(ctx: RouteContext, operation: MerchantOperation): RequestHandler {
  const { options, charges, writes } = ctx;
  const { store } = options;
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
    const write: MerchantWrite = {
      operation,
      sequence,
      fingerprint: operationFingerprint(operation, body.amount),
      amount: body.amount,
    };
    const { charge: recorded, created } = await charges.recordWrite(
      charge.reference,
      operationNews(write, "sent", new Date(options.now()).toISOString()),
    );
    const entry = (recorded ?? charge).operationLog?.[operationId(operation, sequence)];
    if (entry !== undefined && entry.fingerprint !== write.fingerprint) {
      throw problem(
        "sequence-reused",
        409,
        "Sequence already used",
        `${operation} sequence ${sequence} was already used for another amount; send a new sequence for a new ${operation}.`,
      );
    }
    // Recorded by an earlier request (or being settled by the reconciler): its key may have reached
    // the service before. Past the window it is never sent again (the service may have forgotten
    // it: a capture or refund would be a new write, and move its amount twice); the log and the
    // order answer instead. A send of it in flight in this process is joined.
    const current = recorded ?? charge;
    const result =
      created || entry === undefined
        ? await writes.send(current, write, entry)
        : await writes.resume(current, write, entry);
    answer(res, result, write);
  });

  /** 200 when the write is done; otherwise the problem that says why not. */
  function answer(res: Response, result: WriteResult, write: MerchantWrite): void {
    const { sequence } = write;
    if (result.kind === "answered") {
      answerOperation(res, result.charge, operation, sequence, result.outcome, result.order);
      return;
    }
    if (result.kind === "not_applied") {
      throw problem(
        "operation-not-applied",
        409,
        "Not applied",
        `The service's order does not show this ${operation}; send it again with a new sequence.`,
      );
    }
    if (result.kind === "refused") {
      throw problem(
        "operation-refused",
        409,
        "Refused earlier",
        `The service refused this ${operation} (sequence ${sequence}); send a new sequence for a new ${operation}.`,
      );
    }
    if (result.kind === "confirming") {
      // A send of it may have reached the service, and nothing can be decided yet: past the window
      // one began moments ago, or this send did nothing (or its order could not be read) after one
      // that may have moved money. Never "nothing happened": the same sequence settles it.
      throw problem(
        "payment-confirming",
        503,
        "Confirming",
        `Whether this ${operation} (sequence ${sequence}) went through is still being confirmed; send it again shortly with the same sequence.`,
        { retryable: true },
      );
    }
    throw problem(
      "operation-unconfirmed",
      409,
      "Outcome unknown",
      `Whether this ${operation} (sequence ${sequence}) went through is unknown, and it can no longer be sent safely; check the order at the service before another ${operation}.`,
      { retryable: false },
    );
  }
}

/**
 * 200 with the charge, the operation and the service's order as re-read after the write; `order`
 * is null when the service accepted the write but the read after it failed: the write is done (a
 * 503 would read as "nothing happened", and a new sequence would move the money twice).
 */
function answerOperation(
  res: Response,
  charge: ChargeRecord,
  operation: MerchantOperation,
  sequence: number | string,
  outcome: "done" | "already_done",
  order: Order | undefined,
): void {
  answerJson(res, 200, {
    ...chargeView(charge),
    operation: { name: operation, sequence, outcome },
    order:
      order === undefined
        ? null
        : {
            status: order.status,
            totalAmount: order.totalAmount,
            capturedAmount: order.capturedAmount,
            refundedAmount: order.refundedAmount,
            cancelledAmount: order.cancelledAmount,
          },
  });
}

export { operationFingerprint };
