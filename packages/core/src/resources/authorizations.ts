import type { ResolvedOptions } from "../config/options.js";
import type { Executor } from "../http/executor.js";
import type { HttpResponse } from "../http/transport.js";
import type { AuthorizationRequest } from "../schemas/authorization-request.js";
import { createAuthorizationResponseSchema } from "../schemas/envelopes.js";
import {
  type AuthorizationRequestInput,
  validateAuthorizationRequest,
} from "../validation/authorization-input.js";
import {
  bodyMatches,
  callLimits,
  parseSuccessBody,
  resolveFirstSentAt,
  resolveIdempotencyKey,
  type WriteOptions,
} from "./request-options.js";

/**
 * Specification 2.5 and 4.1: a 200 (performed now) carries the order id, a 202 (accepted) does not.
 * Any other answer, another 2xx or a 200 without an order to capture included, is asked again with
 * the same key: the service may have charged, so it is never reported as a success.
 */
export const acceptsCreated = bodyMatches(
  createAuthorizationResponseSchema,
  (envelope, status) =>
    (status === 200 || status === 202) && (status === 200) === (envelope.data.orderId !== undefined),
);

export interface CreateAuthorizationResult {
  /** Identifies the authorization; webhooks refer to it. */
  authorizationId: string;
  /** Present when the authorization was performed synchronously (HTTP 200). */
  orderId?: string;
  /** True for 200 (performed now), false for 202 (accepted; the outcome arrives by webhook). */
  synchronous: boolean;
  /** The service's response id. */
  requestId: string;
  /** The key the request carried, for your records and reconciliation. */
  idempotencyKey: string;
}

export class Authorizations {
  readonly #executor: Executor;
  readonly #options: ResolvedOptions;

  constructor(executor: Executor, options: ResolvedOptions) {
    this.#executor = executor;
    this.#options = options;
  }

  /**
   * Charges a customer token: validates the request (throwing `ValidationError` before any network
   * call; a request returned by `checkAuthorizationRequest` is not checked twice), then sends it
   * with an idempotency key that every retry reuses.
   */
  async create(
    request: AuthorizationRequestInput | AuthorizationRequest,
    options?: WriteOptions,
  ): Promise<CreateAuthorizationResult> {
    const body = validateAuthorizationRequest(request);
    const idempotencyKey = resolveIdempotencyKey(options);
    const operation = "Create authorization";
    const response = await this.#executor.execute({
      method: "POST",
      path: this.#options.paths.authorizations,
      body: JSON.stringify(body),
      idempotencyKey,
      operation,
      write: "authorizations.create",
      accepts: acceptsCreated,
      ...resolveFirstSentAt(options),
      ...callLimits(options),
    });
    return createdResult(response, { operation, idempotencyKey });
  }
}

/** The result of a create answered by `response` (one `acceptsCreated` accepted). */
export function createdResult(
  response: HttpResponse,
  context: { operation: string; idempotencyKey: string },
): CreateAuthorizationResult {
  const envelope = parseSuccessBody(createAuthorizationResponseSchema, response, context);
  return {
    authorizationId: envelope.data.authorizationId,
    ...(envelope.data.orderId === undefined ? {} : { orderId: envelope.data.orderId }),
    synchronous: response.status === 200,
    requestId: envelope.id,
    idempotencyKey: context.idempotencyKey,
  };
}
