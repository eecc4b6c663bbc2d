import type { ResolvedOptions } from "../config/options.js";
import type { Executor } from "../http/executor.js";
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

/** A 200/202 whose body is not the envelope with a GUID authorization id is asked again (same key). */
const acceptsCreated = bodyMatches(createAuthorizationResponseSchema);

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
    const envelope = parseSuccessBody(createAuthorizationResponseSchema, response, {
      operation,
      idempotencyKey,
    });
    return {
      authorizationId: envelope.data.authorizationId,
      ...(envelope.data.orderId === undefined ? {} : { orderId: envelope.data.orderId }),
      synchronous: response.status === 200,
      requestId: envelope.id,
      idempotencyKey,
    };
  }
}
