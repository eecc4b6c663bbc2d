import { setImmediate as nextTurn } from "node:timers/promises";
import type { CustomerTokenStatus } from "@purchase-auth/core";
import { DEFAULT_PATHS } from "@purchase-auth/core";
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
import { parseJsonBody } from "./http/body.js";
import { errorResponse } from "./http/envelopes.js";
import { ServicePipeline } from "./http/pipeline.js";
import { Router, resourceOf } from "./http/router.js";
import type { ApiResponse, SandboxOutcome, SandboxRequest } from "./http/types.js";
import { type ResolvedSandboxOptions, resolveOptions, type SandboxOptions } from "./options.js";
import { createAuthorizationRoute } from "./routes/authorizations.js";
import { type ControlCall, controlRoutes } from "./routes/control.js";
import { cancelCustomerTokenRoute, getCustomerTokenRoute } from "./routes/customer-tokens.js";
import { cancelOrderRoute, captureOrderRoute, getOrderRoute, refundOrderRoute } from "./routes/orders.js";
import type { ServiceRoute } from "./routes/service-route.js";
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

type RouteTarget =
  | { kind: "token" }
  | { kind: "service"; route: ServiceRoute }
  | { kind: "control"; handle: (call: ControlCall) => ApiResponse | Promise<ApiResponse> };

/**
 * The simulated payment service, in process: `handle` answers one HTTP request (no sockets needed),
 * and the methods of `SandboxControl` set it up and inspect it. `startSandbox` serves it over HTTP.
 */
export class Simulator implements SandboxControl {
  readonly options: ResolvedSandboxOptions;
  readonly #ctx: SandboxContext;
  readonly #processor: AuthorizationProcessor;
  readonly #pipeline: ServicePipeline;
  readonly #router = new Router<RouteTarget>();
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
    this.#pipeline = new ServicePipeline(this.#ctx);
    this.#addRoutes();
    if (this.options.demo) this.#demo = seedDemo(this, this.options.demoWebhooks);
  }

  /** The demo data, when created with `demo: true`. */
  get demo(): DemoSeed | undefined {
    return this.#demo;
  }

  /** Answers one request. Never throws: a bug becomes a 500 envelope (and a line on stderr). */
  async handle(request: SandboxRequest): Promise<SandboxOutcome> {
    try {
      const { path, query } = splitTarget(request.url);
      const match = this.#router.match(request.method, path);
      if (match.kind === "not_found") return respond(errorResponse(404));
      if (match.kind === "method_not_allowed") {
        return respond(errorResponse(405, [], { allow: match.allow.join(", ") }));
      }
      const target = match.route;
      if (target.kind === "control")
        return respond(
          await this.#serveControl(target.handle, request, new URLSearchParams(query), match.params),
        );
      this.#ctx.stats.requests++;
      if (target.kind === "token") return await this.#pipeline.serveTokenEndpoint(request, path);
      const resource = resourceOf(match.template, match.params);
      return await this.#pipeline.serveService(target.route, request, path, match.params, resource);
    } catch (error) {
      reportError(`${request.method} ${request.url} failed`, error);
      return respond(errorResponse(500));
    }
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
    this.#pipeline.close();
    this.#ctx.scheduler.stop();
    this.#ctx.webhooks.close();
  }

  // ---- internals ----

  #addRoutes(): void {
    const ctx = this.#ctx;
    const processor = this.#processor;
    const service = (route: ServiceRoute): RouteTarget => ({ kind: "service", route });
    this.#router
      .add("POST", DEFAULT_PATHS.token, { kind: "token" })
      .add("POST", DEFAULT_PATHS.authorizations, service(createAuthorizationRoute(ctx, processor)))
      .add("GET", DEFAULT_PATHS.order, service(getOrderRoute(ctx)))
      .add("POST", DEFAULT_PATHS.captureOrder, service(captureOrderRoute(ctx, processor)))
      .add("POST", DEFAULT_PATHS.cancelOrder, service(cancelOrderRoute(ctx, processor)))
      .add("POST", DEFAULT_PATHS.refundOrder, service(refundOrderRoute(ctx, processor)))
      .add("GET", DEFAULT_PATHS.customerToken, service(getCustomerTokenRoute(ctx)))
      .add("DELETE", DEFAULT_PATHS.customerToken, service(cancelCustomerTokenRoute(ctx)));
    for (const route of controlRoutes(this, () => this.#demo)) {
      this.#router.add(route.method, route.path, { kind: "control", handle: (call) => route.handle(call) });
    }
  }

  async #serveControl(
    handle: (call: ControlCall) => ApiResponse | Promise<ApiResponse>,
    request: SandboxRequest,
    query: URLSearchParams,
    params: Readonly<Record<string, string>>,
  ): Promise<ApiResponse> {
    const parsed = parseJsonBody(request, null);
    if (!parsed.ok) return errorResponse(400, [{ reason: "INVALID_REQUEST", message: parsed.message }]);
    try {
      return await handle({ body: parsed.value ?? undefined, query, params });
    } catch (error) {
      if (!(error instanceof SandboxControlError)) throw error;
      const reason = { 400: "INVALID_REQUEST", 404: "NOT_FOUND", 409: "CONFLICT" }[error.status];
      const field = error.field === undefined ? {} : { field: error.field };
      return errorResponse(error.status, [{ reason, message: error.message, ...field }]);
    }
  }

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

function respond(response: ApiResponse): SandboxOutcome {
  return { kind: "respond", ...response };
}

/**
 * Path and query (without "?") of a request target; anything that is not origin-form gets a path that
 * matches nothing. The query is parsed only by the control routes, the only ones that read it.
 */
function splitTarget(url: string): { path: string; query: string } {
  const queryStart = url.indexOf("?");
  const path = queryStart < 0 ? url : url.slice(0, queryStart);
  const query = queryStart < 0 ? "" : url.slice(queryStart + 1);
  return { path: path.startsWith("/") ? path : "", query };
}

function conflict(message: string): never {
  throw new SandboxControlError(409, message);
}

function notFound(message: string): never {
  throw new SandboxControlError(404, message);
}

function reportError(what: string, error: unknown): void {
  console.error(`[purchase-auth-sandbox] ${what}:`, error);
}
