import { z } from "zod";
import type { ResolvedOptions } from "../config/options.js";
import { expandPath } from "../config/wire-names.js";
import type { Executor } from "../http/executor.js";
import { type CustomerToken, customerTokenSchema } from "../schemas/customer-tokens.js";
import { successEnvelopeSchema } from "../schemas/envelopes.js";
import {
  bodyMatches,
  callLimits,
  checkGuidArgument,
  parseSuccessBody,
  type RequestOptions,
  resolveFirstSentAt,
  resolveIdempotencyKey,
  type WriteOptions,
} from "./request-options.js";

const customerTokenEnvelopeSchema = successEnvelopeSchema(customerTokenSchema);
const acceptedSchema = z.object({ id: z.string() });
const acceptsCancelled = bodyMatches(acceptedSchema);

export class CustomerTokens {
  readonly #executor: Executor;
  readonly #options: ResolvedOptions;

  constructor(executor: Executor, options: ResolvedOptions) {
    this.#executor = executor;
    this.#options = options;
  }

  /** Reads a customer token: status, store, currency and default capture mode. */
  async get(customerToken: string, options?: RequestOptions): Promise<CustomerToken> {
    const token = checkGuidArgument(customerToken, "customerToken");
    const operation = "Get customer token";
    const response = await this.#executor.execute({
      method: "GET",
      path: expandPath(this.#options.paths.customerToken, { customerToken: token }),
      operation,
      ...callLimits(options),
    });
    return parseSuccessBody(customerTokenEnvelopeSchema, response, { operation }).data;
  }

  /** Cancels a customer token; later authorizations with it fail with TOKEN_CANCELLED. */
  async cancel(customerToken: string, options?: WriteOptions): Promise<{ requestId: string }> {
    const token = checkGuidArgument(customerToken, "customerToken");
    const operation = "Cancel customer token";
    const idempotencyKey = resolveIdempotencyKey(options);
    const response = await this.#executor.execute({
      method: "DELETE",
      path: expandPath(this.#options.paths.customerToken, { customerToken: token }),
      operation,
      idempotencyKey,
      write: "customerTokens.cancel",
      accepts: acceptsCancelled,
      ...resolveFirstSentAt(options),
      ...callLimits(options),
    });
    return { requestId: parseSuccessBody(acceptedSchema, response, { operation }).id };
  }
}
