import { inspect } from "node:util";
import type { Dispatcher } from "undici";
import { TokenProvider } from "./auth/token-provider.js";
import { type PurchaseAuthClientOptions, type ResolvedOptions, resolveOptions } from "./config/options.js";
import type { ServicePaths } from "./config/wire-names.js";
import type { UnknownWrite } from "./errors/errors.js";
import { Executor } from "./http/executor.js";
import { createDefaultDispatcher } from "./http/transport.js";
import { Authorizations } from "./resources/authorizations.js";
import { CustomerTokens } from "./resources/customer-tokens.js";
import { Orders } from "./resources/orders.js";
import { type ResendOptions, type ResendResult, resendUnknownWrite } from "./resources/unknown-writes.js";
import type { WebhookEvent } from "./schemas/webhook-events.js";
import { type VerifyWebhookOptions, verifyWebhook, type WebhookHeaders } from "./webhooks/verify.js";

/**
 * The client of the Purchase Authorization Service. Create one per set of credentials and share it:
 * it caches the access token and keeps connections alive.
 *
 * ```ts
 * const client = new PurchaseAuthClient({ baseUrl, clientId, clientSecret, scope });
 * const { authorizationId, orderId } = await client.authorizations.create(request);
 * ```
 */
export class PurchaseAuthClient {
  readonly authorizations: Authorizations;
  readonly orders: Orders;
  readonly customerTokens: CustomerTokens;
  /**
   * The paths this client sends to (the defaults with the `paths` option applied), for code that
   * builds a request record of its own, such as an `UnknownWrite` to resend.
   */
  readonly paths: Readonly<ServicePaths>;
  readonly #options: ResolvedOptions;
  readonly #executor: Executor;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  #closed: Promise<void> | undefined;

  constructor(options: PurchaseAuthClientOptions) {
    const resolved = resolveOptions(options);
    this.#options = resolved;
    this.paths = Object.freeze({ ...resolved.paths });
    this.#ownsDispatcher = resolved.dispatcher === undefined;
    this.#dispatcher = resolved.dispatcher ?? createDefaultDispatcher();
    const tokens = new TokenProvider({
      tokenUrl: new URL(resolved.authUrl + resolved.paths.token),
      clientId: resolved.clientId,
      clientSecret: options.clientSecret,
      scope: resolved.scope,
      dispatcher: this.#dispatcher,
      timeoutMs: resolved.timeoutMs,
      refreshMarginMs: resolved.tokenRefreshMarginMs,
      now: resolved.now,
      logger: resolved.logger,
    });
    const executor = new Executor(resolved, tokens, this.#dispatcher);
    this.#executor = executor;
    this.authorizations = new Authorizations(executor, resolved);
    this.orders = new Orders(executor, resolved);
    this.customerTokens = new CustomerTokens(executor, resolved);
  }

  /**
   * Resolves a write whose outcome was unknown (`OutcomeUnknownError.write`, stored as JSON): sends
   * it again exactly as first sent, with its key, also from another process after a restart. Once
   * the service's idempotency window has passed it throws `IdempotencyWindowPassedError` and sends
   * nothing, since the service may then treat the key as new and charge twice. Any other error
   * follows the outcome model: a definite answer about the key, or still unknown (never "not sent":
   * the first send may have taken effect).
   */
  resendUnknownWrite(write: UnknownWrite, options?: ResendOptions): Promise<ResendResult> {
    return resendUnknownWrite(this.#executor, write, options);
  }

  /**
   * Verifies a webhook with this client's header and event-name overrides. The same as the
   * standalone `verifyWebhook`, which needs no client.
   */
  verifyWebhook(
    rawBody: string | Uint8Array,
    headers: WebhookHeaders,
    secrets: string | ReadonlyArray<string>,
    options: Omit<VerifyWebhookOptions, "headers" | "eventTypes"> = {},
  ): WebhookEvent {
    return verifyWebhook(rawBody, headers, secrets, {
      ...options,
      headers: this.#options.headers,
      eventTypes: this.#options.eventTypes,
    });
  }

  /** Closes the connections of the client's own dispatcher (not of one you passed in). Idempotent. */
  close(): Promise<void> {
    if (!this.#ownsDispatcher) return Promise.resolve();
    this.#closed ??= this.#dispatcher.close().then(() => undefined);
    return this.#closed;
  }

  /** What `JSON.stringify` shows: the configuration, never the secret or a token. */
  toJSON(): Record<string, unknown> {
    const { baseUrl, authUrl, clientId, scope, timeoutMs, deadlineMs, maxRetries } = this.#options;
    return { baseUrl, authUrl, clientId, scope, timeoutMs, deadlineMs, maxRetries };
  }

  [inspect.custom](): string {
    return `PurchaseAuthClient ${inspect(this.toJSON())}`;
  }
}
