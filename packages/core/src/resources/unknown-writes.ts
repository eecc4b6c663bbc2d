import { z } from "zod";
import { type UnknownWrite, ValidationError } from "../errors/errors.js";
import type { Executor } from "../http/executor.js";
import { guidSchema } from "../schemas/common.js";
import { parseOrThrow } from "../validation/parse.js";
import { acceptsCreated, type CreateAuthorizationResult, createdResult } from "./authorizations.js";
import type { OrderWriteResult } from "./orders.js";
import {
  bodyMatches,
  callLimits,
  checkOptionsObject,
  parseSuccessBody,
  type RequestOptions,
} from "./request-options.js";

// Resolving a write whose outcome was unknown: the exact request again, with its key, while the
// service still answers that key. Works from a stored record, in another process, after a restart.

/** What a resent write turned out to be: the same result its first call would have given. */
export type ResendResult =
  | { operation: "authorizations.create"; result: CreateAuthorizationResult }
  | { operation: "orders.capture" | "orders.cancel" | "orders.refund"; result: OrderWriteResult }
  | { operation: "customerTokens.cancel"; result: { requestId: string } };

/** Options of `client.resendUnknownWrite`. */
export interface ResendOptions extends RequestOptions {
  /** The time the idempotency window is judged at. Default: the client's clock (`now` option). */
  now?: Date;
}

const unknownWriteSchema = z
  .object({
    operation: z.enum([
      "authorizations.create",
      "orders.capture",
      "orders.cancel",
      "orders.refund",
      "customerTokens.cancel",
    ]),
    method: z.enum(["POST", "DELETE"]),
    path: z.string().startsWith("/"),
    body: z.string().optional(),
    idempotencyKey: guidSchema,
    firstSentAt: z.iso.datetime({ offset: true }),
  })
  .refine((write) => (write.method === "DELETE") === (write.operation === "customerTokens.cancel"), {
    message: "method does not match the operation",
    path: ["method"],
  });

const acceptedSchema = z.object({ id: z.string() });
const GUID_IN_PATH = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/**
 * Sends `write` again exactly as it was first sent, with its key. Throws
 * `IdempotencyWindowPassedError` without sending once the window has passed; otherwise the same
 * outcomes as the first call (a definite answer about the key, or still unknown).
 */
export async function resendUnknownWrite(
  executor: Executor,
  write: UnknownWrite,
  options: ResendOptions = {},
): Promise<ResendResult> {
  const checked = parseOrThrow(unknownWriteSchema, write, "write");
  checkOptionsObject(options);
  const now = options.now;
  if (now !== undefined && (!(now instanceof Date) || Number.isNaN(now.getTime()))) {
    throw new ValidationError([{ path: "now", rule: "type", message: "now must be a valid Date" }]);
  }
  const isCreate = checked.operation === "authorizations.create";
  const operation = `Resend ${checked.operation}`;
  const response = await executor.execute({
    method: checked.method,
    path: checked.path,
    ...(checked.body === undefined ? {} : { body: checked.body }),
    idempotencyKey: checked.idempotencyKey,
    operation,
    write: checked.operation,
    firstSentAt: new Date(checked.firstSentAt),
    ...(now === undefined ? {} : { now: now.getTime() }),
    ...(isCreate ? { accepts: acceptsCreated } : {}),
    ...(checked.operation === "customerTokens.cancel" ? { accepts: bodyMatches(acceptedSchema) } : {}),
    ...callLimits(options),
  });
  const context = { operation, idempotencyKey: checked.idempotencyKey };
  switch (checked.operation) {
    case "authorizations.create":
      return { operation: checked.operation, result: createdResult(response, context) };
    case "customerTokens.cancel":
      return {
        operation: checked.operation,
        result: { requestId: parseSuccessBody(acceptedSchema, response, context).id },
      };
    default:
      return {
        operation: checked.operation,
        result: {
          orderId: GUID_IN_PATH.exec(checked.path)?.[0] ?? "",
          idempotencyKey: checked.idempotencyKey,
        },
      };
  }
}
