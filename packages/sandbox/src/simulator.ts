import { setImmediate as nextTurn } from "node:timers/promises";
import type { CustomerTokenStatus } from "@purchase-auth/core";
import { emptyStats, type SandboxContext, type TokenRequestRecord } from "./context.js";
import { SandboxControlError } from "./control/errors.js";
import {
  readAdvance,
  readAuthorizationFilter,
  readCreateApiClient,
  readCreateCustomerToken,
  readCreateMerchant,
  readFaultSpec,
  readOrderFilter,
  readRevoke,
  readTokenStatus,
  readUpdateCustomerToken,
  readWebhookConfig,
  readWebhookDelivery,
} from "./control/input.js";
import type {
  ApiClientCredentials,
  AuthorizationFilter,
  AuthorizationView,
  CreateApiClientInput,
  CreateCustomerTokenInput,
  CreateMerchantInput,
  CustomerTokenView,
  MerchantCredentials,
  OrderFilter,
  OrderView,
  RevokeAccessTokensInput,
  SandboxControl,
  SandboxStatsView,
  UpdateCustomerTokenInput,
  WebhookConfig,
  WebhookConfigInput,
} from "./control/types.js";
import { applyBehaviour, authorizationView, orderView, tokenView } from "./control/views.js";
import { RingBuffer } from "./core/bounded.js";
import { VirtualClock } from "./core/clock.js";
import { newGuid, randomOpaque } from "./core/ids.js";
import { Scheduler } from "./core/scheduler.js";
import { type DemoSeed, seedDemo } from "./demo.js";
import { AuthorizationProcessor } from "./domain/authorization-processor.js";
import { changeCustomerTokenStatus } from "./domain/customer-token-status.js";
import { FaultInjector, type FaultSpec, type FaultView, MAX_ACTIVE_FAULTS } from "./faults.js";
import { RequestHandler, reportError } from "./http/request-handler.js";
import type { SandboxOutcome, SandboxRequest } from "./http/types.js";
import { type ResolvedSandboxOptions, resolveOptions, type SandboxOptions } from "./options.js";
import { AccessTokenStore } from "./state/access-tokens.js";
import type { AttemptRecord } from "./state/authorizations.js";
import { AuthorizationStore } from "./state/authorizations.js";
import { type CustomerTokenRecord, CustomerTokenStore } from "./state/customer-tokens.js";
import { IdempotencyStore } from "./state/idempotency.js";
import { type ApiClient, type Merchant, MerchantStore } from "./state/merchants.js";
import { OrderStore } from "./state/orders.js";
import {
  type EmittedEvent,
  type WebhookDeliveryRecord,
  type WebhookDeliverySettings,
  WebhookDispatcher,
} from "./webhooks/dispatcher.js";

/**
 * The simulated payment service, in process: `handle` answers one HTTP request (no sockets needed),
 * and the methods of `SandboxControl` set it up and inspect it. `startSandbox` serves it over HTTP.
 */
export class Simulator implements SandboxControl {
  readonly options: ResolvedSandboxOptions;
  readonly #ctx: SandboxContext;
  readonly #processor: AuthorizationProcessor;
  readonly #handler: RequestHandler;
  #demo: DemoSeed | undefined;

  constructor(options: SandboxOptions = {}) {
    this.options = resolveOptions(options);
    const clock = new VirtualClock();
    const scheduler = new Scheduler(clock, (error, label) => reportError(`job "${label}" failed`, error));
    const merchants = new MerchantStore();
    const { historyLimit, maxStoredObjects } = this.options;
    this.#ctx = {
      options: this.options,
      clock,
      scheduler,
      merchants,
      accessTokens: new AccessTokenStore(maxStoredObjects),
      customerTokens: new CustomerTokenStore(),
      authorizations: new AuthorizationStore(maxStoredObjects),
      orders: new OrderStore(maxStoredObjects),
      idempotency: new IdempotencyStore(this.options.maxIdempotencyKeys),
      webhooks: new WebhookDispatcher({
        clock,
        scheduler,
        webhooksOf: (merchantId) => {
          const merchant = merchants.merchant(merchantId);
          return merchant && { urls: merchant.webhookUrls, secrets: merchant.webhookSecrets };
        },
        timeoutMs: this.options.webhookTimeoutMs,
        concurrency: this.options.webhookConcurrency,
        retryDelaysMs: this.options.webhookRetryDelaysMs,
        historyLimit,
      }),
      faults: new FaultInjector(this.options.seed),
      attemptLog: new RingBuffer<AttemptRecord>(historyLimit),
      tokenRequestLog: new RingBuffer<TokenRequestRecord>(historyLimit),
      stats: emptyStats(),
    };
    this.#processor = new AuthorizationProcessor(this.#ctx);
    this.#handler = new RequestHandler(this.#ctx, this.#processor, this, () => this.#demo);
    if (this.options.demo) this.#demo = seedDemo(this, this.options.demoWebhooks);
  }

  /** The demo data, when created with `demo: true`. */
  get demo(): DemoSeed | undefined {
    return this.#demo;
  }

  /** Answers one request. Never throws: a bug becomes a 500 envelope (and a line on stderr). */
  async handle(request: SandboxRequest): Promise<SandboxOutcome> {
    return this.#handler.serve(request);
  }

  /** `handle` without the promise when the answer is ready at once (the HTTP transport uses this). */
  protected serve(request: SandboxRequest): SandboxOutcome | Promise<SandboxOutcome> {
    return this.#handler.serve(request);
  }

  // ---- control: merchants and API clients ----

  createMerchant(input: CreateMerchantInput = {}): MerchantCredentials {
    const parsed = readCreateMerchant(input);
    const merchantId = parsed.merchantId ?? newGuid();
    if (this.#ctx.merchants.merchant(merchantId)) conflict(`merchant ${merchantId} exists already`);
    if (parsed.clientId !== undefined && this.#ctx.merchants.client(parsed.clientId)) {
      conflict(`API client ${parsed.clientId} exists already`);
    }
    const merchant = this.#ctx.merchants.addMerchant({
      merchantId,
      name: parsed.name ?? `Merchant ${merchantId.slice(0, 8)}`,
      storeId: parsed.storeId ?? `store-${merchantId.slice(0, 8)}`,
      webhookUrls: [],
      webhookSecrets: [],
    });
    const client = this.#addClient(merchant, parsed);
    return {
      merchantId,
      name: merchant.name,
      storeId: merchant.storeId,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
      scope: client.scope,
    };
  }

  createApiClient(input: CreateApiClientInput): ApiClientCredentials {
    const parsed = readCreateApiClient(input);
    const merchant = this.#merchant(parsed.merchantId);
    if (parsed.clientId !== undefined && this.#ctx.merchants.client(parsed.clientId)) {
      conflict(`API client ${parsed.clientId} exists already`);
    }
    const client = this.#addClient(merchant, parsed);
    return { ...client };
  }

  #addClient(
    merchant: Merchant,
    input: { scope?: string; clientId?: string; clientSecret?: string },
  ): ApiClient {
    return this.#ctx.merchants.addClient({
      clientId: input.clientId ?? newGuid(),
      clientSecret: input.clientSecret ?? randomOpaque(24),
      scope: input.scope ?? this.options.defaultScope,
      merchantId: merchant.merchantId,
    });
  }

  // ---- control: customer tokens ----

  createCustomerToken(input: CreateCustomerTokenInput): CustomerTokenView {
    const parsed = readCreateCustomerToken(input);
    const merchant = this.#merchant(parsed.merchantId);
    const customerToken = parsed.customerToken ?? newGuid();
    if (this.#ctx.customerTokens.get(customerToken))
      conflict(`customer token ${customerToken} exists already`);
    const token = this.#ctx.customerTokens.add({
      customerToken,
      merchantId: merchant.merchantId,
      status: parsed.status ?? "Active",
      currency: parsed.currency ?? "EUR",
      storeId: parsed.storeId ?? merchant.storeId,
      captureMode: parsed.captureMode ?? "Auto",
      fundsCents: undefined,
      needsChallenge: false,
      failureReason: undefined,
      failNextAttempts: [],
      paymentMethodExpired: false,
    });
    applyBehaviour(token, parsed.behaviour);
    return tokenView(token);
  }

  getCustomerToken(customerToken: string): CustomerTokenView {
    return tokenView(this.#token(customerToken));
  }

  updateCustomerToken(customerToken: string, input: UpdateCustomerTokenInput): CustomerTokenView {
    const token = this.#token(customerToken);
    const parsed = readUpdateCustomerToken(input);
    applyBehaviour(token, parsed.behaviour);
    if (parsed.status !== undefined) changeCustomerTokenStatus(this.#ctx, token, parsed.status);
    return tokenView(token);
  }

  setCustomerTokenStatus(customerToken: string, status: CustomerTokenStatus): CustomerTokenView {
    const token = this.#token(customerToken);
    changeCustomerTokenStatus(this.#ctx, token, readTokenStatus(status));
    return tokenView(token);
  }

  // ---- control: webhooks ----

  setWebhooks(input: WebhookConfigInput): WebhookConfig {
    const parsed = readWebhookConfig(input);
    const merchant = this.#merchant(parsed.merchantId);
    merchant.webhookUrls = parsed.urls;
    merchant.webhookSecrets = parsed.secrets ?? [`whsec_${randomOpaque(24)}`];
    return {
      merchantId: merchant.merchantId,
      urls: [...merchant.webhookUrls],
      secrets: [...merchant.webhookSecrets],
    };
  }

  setWebhookDelivery(settings: Partial<WebhookDeliverySettings>): WebhookDeliverySettings {
    return this.#ctx.webhooks.configure(readWebhookDelivery(settings));
  }

  // ---- control: clock and faults ----

  advanceClock(ms: number): number {
    return this.#ctx.scheduler.advance(readAdvance(ms, this.#ctx.clock.now()));
  }

  now(): number {
    return this.#ctx.clock.now();
  }

  injectFault(spec: FaultSpec): string {
    const parsed = readFaultSpec(spec);
    if (this.#ctx.faults.size >= MAX_ACTIVE_FAULTS) {
      conflict(`at most ${MAX_ACTIVE_FAULTS} faults can be active; clear them first`);
    }
    return this.#ctx.faults.inject(parsed);
  }

  clearFaults(): void {
    this.#ctx.faults.clear();
  }

  faults(): FaultView[] {
    return this.#ctx.faults.list();
  }

  revokeAccessTokens(input: RevokeAccessTokensInput = {}): number {
    return this.#ctx.accessTokens.revokeAll(readRevoke(input).clientId);
  }

  // ---- control: what happened ----

  authorizations(filter: AuthorizationFilter = {}): AuthorizationView[] {
    const { merchantId, customerToken, status } = readAuthorizationFilter(filter);
    return this.#ctx.authorizations
      .list()
      .filter(
        (auth) =>
          (merchantId === undefined || auth.merchantId === merchantId) &&
          (customerToken === undefined || auth.customerToken === customerToken) &&
          (status === undefined || auth.status === status),
      )
      .map(authorizationView);
  }

  attempts(): AttemptRecord[] {
    return this.#ctx.attemptLog.toArray();
  }

  orders(filter: OrderFilter = {}): OrderView[] {
    const { merchantId, authorizationId } = readOrderFilter(filter);
    return this.#ctx.orders
      .list()
      .filter(
        (order) =>
          (merchantId === undefined || order.merchantId === merchantId) &&
          (authorizationId === undefined || order.authorizationId === authorizationId),
      )
      .map(orderView);
  }

  events(): EmittedEvent[] {
    return this.#ctx.webhooks.events();
  }

  webhookDeliveries(): WebhookDeliveryRecord[] {
    return this.#ctx.webhooks.deliveries();
  }

  tokenRequests(): TokenRequestRecord[] {
    return this.#ctx.tokenRequestLog.toArray();
  }

  stats(): SandboxStatsView {
    return {
      ...this.#ctx.stats,
      webhookEvents: this.#ctx.webhooks.emittedCount,
      webhookPosts: this.#ctx.webhooks.sentCount,
      scheduledJobs: this.#ctx.scheduler.size,
      idempotencyKeys: this.#ctx.idempotency.size,
    };
  }

  // ---- control: lifecycle ----

  async settle(): Promise<void> {
    const { scheduler, webhooks } = this.#ctx;
    for (;;) {
      scheduler.runDue();
      await webhooks.whenIdle();
      await nextTurn(); // let anything the last step set off (timers, flushes) show itself
      if (!scheduler.hasDue() && webhooks.isIdle()) return;
    }
  }

  reset(): void {
    const ctx = this.#ctx;
    ctx.scheduler.clear();
    this.#processor.reset();
    ctx.clock.reset();
    ctx.webhooks.reset();
    ctx.faults.reset();
    ctx.merchants.clear();
    ctx.accessTokens.clear();
    ctx.customerTokens.clear();
    ctx.authorizations.clear();
    ctx.orders.clear();
    ctx.idempotency.clear();
    ctx.attemptLog.clear();
    ctx.tokenRequestLog.clear();
    Object.assign(ctx.stats, emptyStats());
    if (this.options.demo) this.#demo = seedDemo(this, this.options.demoWebhooks);
  }

  /** Stops timers, latency waits and webhook deliveries. The simulator answers nothing useful after. */
  dispose(): void {
    this.#handler.close();
    this.#ctx.scheduler.stop();
    this.#ctx.webhooks.close();
  }

  // ---- internals ----

  #merchant(merchantId: string): Merchant {
    return this.#ctx.merchants.merchant(merchantId) ?? notFound(`merchant ${merchantId} does not exist`);
  }

  #token(customerToken: string): CustomerTokenRecord {
    if (typeof customerToken !== "string")
      throw new SandboxControlError(400, "customerToken must be a string");
    return (
      this.#ctx.customerTokens.get(customerToken) ??
      notFound(`customer token ${customerToken} does not exist`)
    );
  }
}

function conflict(message: string): never {
  throw new SandboxControlError(409, message);
}

function notFound(message: string): never {
  throw new SandboxControlError(404, message);
}
