import type { z } from "zod";
import type { ResolvedOptions } from "../config/options.js";
import { expandPath } from "../config/wire-names.js";
import type { Executor } from "../http/executor.js";
import { decimalStringOf, normalizeAmount } from "../money/decimal.js";
import { successEnvelopeSchema } from "../schemas/envelopes.js";
import {
  cancelRequestSchema,
  captureRequestSchema,
  type Order,
  orderSchema,
  refundRequestSchema,
} from "../schemas/orders.js";
import { parseOrThrow } from "../validation/parse.js";
import {
  callLimits,
  checkGuidArgument,
  parseSuccessBody,
  type RequestOptions,
  resolveFirstSentAt,
  resolveIdempotencyKey,
  type WriteOptions,
} from "./request-options.js";

export interface CaptureInput {
  /** Amount to capture (decimal string or number, at most 2 decimals). Omitted: all that remains. */
  amount?: string | number;
  actionReference?: string;
  description?: string;
}

export interface CancelInput {
  actionReference?: string;
}

export interface RefundInput {
  /** Amount to refund, at most what was captured and not yet refunded. */
  amount: string | number;
  actionReference?: string;
  description?: string;
}

/** The answer to an accepted order write (HTTP 202). Re-read the order when you need its state. */
export interface OrderWriteResult {
  orderId: string;
  idempotencyKey: string;
}

const orderEnvelopeSchema = successEnvelopeSchema(orderSchema);

/** Amounts go on the wire as exact 2-decimal strings; anything else is left for the schema to name. */
function withWireAmount<T extends { amount?: unknown }>(input: T): T {
  // Not an object (null, none at all): the schema names what is wrong with it.
  if (typeof input !== "object" || input === null || input.amount === undefined) return input;
  const text = decimalStringOf(input.amount);
  if (text === undefined) return input;
  try {
    return { ...input, amount: normalizeAmount(text) };
  } catch {
    return { ...input, amount: text };
  }
}

export class Orders {
  readonly #executor: Executor;
  readonly #options: ResolvedOptions;

  constructor(executor: Executor, options: ResolvedOptions) {
    this.#executor = executor;
    this.#options = options;
  }

  /** Reads an order: its status and the captured, refunded and cancelled amounts. */
  async get(orderId: string, options?: RequestOptions): Promise<Order> {
    const id = checkGuidArgument(orderId, "orderId");
    const operation = `Get order ${id}`;
    const response = await this.#executor.execute({
      method: "GET",
      path: expandPath(this.#options.paths.order, { orderId: id }),
      operation,
      ...callLimits(options),
    });
    return parseSuccessBody(orderEnvelopeSchema, response, { operation }).data;
  }

  /** Captures all that remains, or `amount` of it (partial capture). Manual capture mode only. */
  capture(orderId: string, input: CaptureInput = {}, options?: WriteOptions): Promise<OrderWriteResult> {
    return this.#write("capture", orderId, captureRequestSchema, withWireAmount(input), options);
  }

  /** Releases the uncaptured remainder of an order. */
  cancel(orderId: string, input: CancelInput = {}, options?: WriteOptions): Promise<OrderWriteResult> {
    return this.#write("cancel", orderId, cancelRequestSchema, input, options);
  }

  /** Refunds `amount` of the captured money. */
  refund(orderId: string, input: RefundInput, options?: WriteOptions): Promise<OrderWriteResult> {
    return this.#write("refund", orderId, refundRequestSchema, withWireAmount(input), options);
  }

  async #write(
    action: "capture" | "cancel" | "refund",
    orderId: string,
    schema: z.ZodType,
    input: unknown,
    options: WriteOptions | undefined,
  ): Promise<OrderWriteResult> {
    const id = checkGuidArgument(orderId, "orderId");
    const body = parseOrThrow(schema, input);
    const idempotencyKey = resolveIdempotencyKey(options);
    const template = {
      capture: this.#options.paths.captureOrder,
      cancel: this.#options.paths.cancelOrder,
      refund: this.#options.paths.refundOrder,
    }[action];
    await this.#executor.execute({
      method: "POST",
      path: expandPath(template, { orderId: id }),
      body: JSON.stringify(body),
      idempotencyKey,
      operation: `${action[0]!.toUpperCase()}${action.slice(1)} order ${id}`,
      write: `orders.${action}`,
      ...resolveFirstSentAt(options),
      ...callLimits(options),
    });
    return { orderId: id, idempotencyKey };
  }
}
