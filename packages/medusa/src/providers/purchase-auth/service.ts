import { inspect } from "node:util";
import type {
  AuthorizePaymentInput,
  AuthorizePaymentOutput,
  CancelPaymentInput,
  CancelPaymentOutput,
  CapturePaymentInput,
  CapturePaymentOutput,
  CreateAccountHolderInput,
  CreateAccountHolderOutput,
  DeleteAccountHolderInput,
  DeleteAccountHolderOutput,
  DeletePaymentInput,
  DeletePaymentMethodInput,
  DeletePaymentMethodOutput,
  DeletePaymentOutput,
  GetPaymentStatusInput,
  GetPaymentStatusOutput,
  InitiatePaymentInput,
  InitiatePaymentOutput,
  ListPaymentMethodsInput,
  ListPaymentMethodsOutput,
  Logger,
  ProviderWebhookPayload,
  RefundPaymentInput,
  RefundPaymentOutput,
  RetrieveAccountHolderInput,
  RetrieveAccountHolderOutput,
  RetrievePaymentInput,
  RetrievePaymentOutput,
  SavePaymentMethodInput,
  SavePaymentMethodOutput,
  UpdateAccountHolderInput,
  UpdateAccountHolderOutput,
  UpdatePaymentInput,
  UpdatePaymentOutput,
  WebhookActionResult,
} from "@medusajs/framework/types";
import {
  AbstractPaymentProvider,
  MedusaError,
  PaymentActions,
  PaymentSessionStatus,
} from "@medusajs/framework/utils";
import {
  type AuthorizationRequestInput,
  type CreateAuthorizationResult,
  DeclinedError,
  formatCents,
  NotFoundError,
  type Order,
  OrderStateError,
  PurchaseAuthClient,
  toCents,
  verifyWebhook,
  WebhookVerificationError,
} from "@purchase-auth/core";
import { toCentsRounded, toWireAmount } from "./amounts";
import { describeReason, logFieldsOf, toMedusaError } from "./errors";
import { authorizeKey, cancelKey, captureKey, refundKey } from "./idempotency-keys";
import {
  type PurchaseAuthProviderOptions,
  type ResolvedProviderOptions,
  resolveProviderOptions,
} from "./options";
import { itemsForAuthorization } from "./order-lines";
import { PaymentModuleRecords } from "./payment-module-records";
import { type PurchaseAuthData, readData, writeData } from "./session-data";
import {
  declineReasonOfTokenStatus,
  sessionStatusOfOrder,
  sessionStatusOfState,
  stateOfOrder,
} from "./status-mapping";
import {
  type AccountHolderData,
  chooseToken,
  readAccountHolderData,
  type StoredCustomerToken,
} from "./stored-tokens";
import { rawBodyOf } from "./webhook-body";
import { mapWebhookEvent } from "./webhook-mapping";

/** Authorizations declined for a reason "worth retrying" get this many attempts, each its own key. */
const MAX_SYNCHRONOUS_ATTEMPTS = 3;

/** Token statuses that can never become chargeable again: such a token is not stored. */
const FINAL_TOKEN_STATUSES = new Set(["Denied", "Revoked", "Cancelled"]);

type Cradle = Record<string, unknown> & { logger?: Logger };

/**
 * Medusa payment provider for the Purchase Authorization Service: charges a logged-in customer's
 * stored customer token. Registered as `pp_purchase-auth_<id>`. One instance serves every request
 * (Medusa keeps providers as singletons), so it holds configuration and the client only.
 */
export class PurchaseAuthProviderService extends AbstractPaymentProvider<PurchaseAuthProviderOptions> {
  static override identifier = "purchase-auth";

  /** Called by Medusa when it loads the provider: a bad option stops the app with its name. */
  static override validateOptions(options: Record<string, unknown>): void {
    try {
      resolveProviderOptions(options);
    } catch (error) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, (error as Error).message);
    }
  }

  readonly #options: ResolvedProviderOptions;
  readonly #client: PurchaseAuthClient;
  readonly #logger: Logger | undefined;
  readonly #records: PaymentModuleRecords;

  constructor(cradle: Cradle, options: PurchaseAuthProviderOptions) {
    // The base class keeps its config on `this`: it gets a copy without the secrets.
    super(cradle, { ...options, clientSecret: "[redacted]", webhookSecret: "[redacted]" });
    this.#options = resolveProviderOptions(options);
    this.#logger = cradle.logger;
    this.#client = new PurchaseAuthClient({ ...this.#options.client, logger: clientLogger(cradle.logger) });
    this.#records = new PaymentModuleRecords(cradle);
  }

  /**
   * A payment session: nothing is charged. Picks the customer token (one stored for the logged-in
   * customer; the storefront may name which) and checks at the service that it exists, is Active
   * and pays in the cart's currency. Of the storefront's `data` only `customer_token` is read.
   */
  async initiatePayment(input: InitiatePaymentInput): Promise<InitiatePaymentOutput> {
    const currency = input.currency_code.toUpperCase();
    const amount = toWireAmount(input.amount);
    if (toCents(amount) <= 0n) {
      throw new MedusaError(
        MedusaError.Types.INVALID_DATA,
        "There is nothing to pay: the amount must be above 0.",
      );
    }
    const sessionId = stringOf(input.data?.session_id) ?? stringOf(input.context?.idempotency_key);
    const holder = input.context?.account_holder
      ? readAccountHolderData(input.context.account_holder.data)
      : undefined;
    const token = chooseToken(holder, input.data?.customer_token, currency);
    await this.#checkChargeable(token.customer_token, currency);
    return {
      id: sessionId ?? token.customer_token,
      status: PaymentSessionStatus.PENDING,
      data: writeData({
        session_id: sessionId ?? null,
        customer_token: token.customer_token,
        amount,
        currency,
        capture_mode: this.#options.captureMode,
        order_lines: null,
        cart_id: null,
        authorization_id: null,
        order_id: null,
        state: "initiated",
        captured_amount: null,
        refunded_amount: null,
        failure_reason: null,
      }),
    };
  }

  /**
   * Medusa core never calls this; the plugin's cart-completion middleware does, server-side, to add
   * the cart's order lines (and the current amount) before authorization. Once authorized, nothing
   * changes.
   */
  async updatePayment(input: UpdatePaymentInput): Promise<UpdatePaymentOutput> {
    const data = readData(input.data);
    if (data.state !== null && data.state !== "initiated") return { data: writeData(data) };
    return {
      data: writeData({
        ...data,
        amount: toWireAmount(input.amount),
        currency: input.currency_code.toUpperCase(),
      }),
    };
  }

  /** Only payment sessions that were never authorized are deleted: nothing exists at the service. */
  async deletePayment(input: DeletePaymentInput): Promise<DeletePaymentOutput> {
    return { data: writeData(readData(input.data)) };
  }

  /**
   * Creates the authorization. The idempotency key is derived from Medusa's key (the payment
   * session id), so Medusa's retries, and a restart mid-call, get the first outcome back instead
   * of a second charge. 200 → authorized (captured with captureMode Auto); 202 →
   * pending_authorization, finished by the webhook; 422 → an error naming the reason.
   */
  async authorizePayment(input: AuthorizePaymentInput): Promise<AuthorizePaymentOutput> {
    const data = readData(input.data);
    const sessionId = data.session_id ?? stringOf(input.context?.idempotency_key);
    if (data.order_id && (data.state === "authorized" || data.state === "captured")) {
      return { status: sessionStatusOfState(data.state), data: writeData(data) };
    }
    if (data.state === "pending_authorization") {
      return { status: PaymentSessionStatus.PENDING_AUTHORIZATION, data: writeData(data) };
    }
    if (data.state === "canceled") {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        "This payment was canceled; start a new payment session.",
      );
    }
    if (data.state === "failed") {
      throw new MedusaError(
        MedusaError.Types.PAYMENT_AUTHORIZATION_ERROR,
        `The payment was declined (${describeReason(data.failure_reason ?? undefined)}); start a new payment session to try again.`,
      );
    }
    if (!sessionId || !data.customer_token || !data.amount || !data.currency) {
      throw new MedusaError(
        MedusaError.Types.INVALID_DATA,
        "This payment session was not initiated by the purchase-auth provider.",
      );
    }
    const keyBase = stringOf(input.context?.idempotency_key) ?? sessionId;
    const result = await this.#createAuthorization(
      this.#authorizationRequest(data, sessionId),
      keyBase,
      sessionId,
    );
    const authorized: PurchaseAuthData = {
      ...data,
      session_id: sessionId,
      authorization_id: result.authorizationId,
      failure_reason: null,
    };
    if (!result.synchronous) {
      return {
        status: PaymentSessionStatus.PENDING_AUTHORIZATION,
        data: writeData({ ...authorized, state: "pending_authorization" }),
      };
    }
    const captured = data.capture_mode === "Auto";
    return {
      status: captured ? PaymentSessionStatus.CAPTURED : PaymentSessionStatus.AUTHORIZED,
      data: writeData({
        ...authorized,
        order_id: result.orderId ?? null,
        state: captured ? "captured" : "authorized",
        captured_amount: captured ? data.amount : "0.00",
        refunded_amount: "0.00",
      }),
    };
  }

  /**
   * Manual capture. Medusa does not pass the amount: it is read from the capture Medusa recorded
   * (its id is the call's idempotency key), so partial captures capture what the admin entered.
   * A capture the service already did (Auto mode, or a retry) counts as done.
   */
  async capturePayment(input: CapturePaymentInput): Promise<CapturePaymentOutput> {
    const data = readData(input.data);
    if (data.capture_mode === "Auto" && data.state === "captured") return { data: writeData(data) };
    const orderId = this.#requireOrder(data, "Capture");
    const captureId = stringOf(input.context?.idempotency_key);
    const amount = captureId ? toWireAmount(await this.#records.captureAmount(captureId)) : undefined;
    try {
      await this.#client.orders.capture(
        orderId,
        { ...(amount === undefined ? {} : { amount }), ...(captureId ? { actionReference: captureId } : {}) },
        captureId ? { idempotencyKey: captureKey(this.#options.idempotencyNamespace, captureId) } : {},
      );
    } catch (error) {
      if (!(OrderStateError.isInstance(error) && (await this.#nothingLeftToCapture(orderId)))) {
        throw this.#fail("Capture", error, { orderId });
      }
      this.#logger?.info(
        `purchase-auth: order ${orderId} was already captured; capture ${captureId} counts as done`,
      );
    }
    return { data: await this.#withOrder(data, orderId) };
  }

  /** Refunds `amount` (full or partial) of what was captured; the refund id keys the request. */
  async refundPayment(input: RefundPaymentInput): Promise<RefundPaymentOutput> {
    const data = readData(input.data);
    const orderId = this.#requireOrder(data, "Refund");
    const cents = toCentsRounded(input.amount);
    if (cents <= 0n) throw new MedusaError(MedusaError.Types.INVALID_DATA, "A refund must be above 0.");
    const refundId = stringOf(input.context?.idempotency_key);
    try {
      await this.#client.orders.refund(
        orderId,
        { amount: formatCents(cents), ...(refundId ? { actionReference: refundId } : {}) },
        refundId ? { idempotencyKey: refundKey(this.#options.idempotencyNamespace, refundId) } : {},
      );
    } catch (error) {
      throw this.#fail("Refund", error, { orderId });
    }
    return { data: await this.#withOrder(data, orderId) };
  }

  /**
   * Releases what is not captured. An order that has nothing left to release (already cancelled,
   * expired or fully captured) counts as done. A session still pending at the service has no order
   * to cancel yet; that is logged.
   */
  async cancelPayment(input: CancelPaymentInput): Promise<CancelPaymentOutput> {
    const data = readData(input.data);
    if (!data.order_id) {
      if (data.state === "pending_authorization") {
        this.#logger?.warn(
          `purchase-auth: payment session ${data.session_id} was canceled in Medusa while authorization ${data.authorization_id} is still pending at the service`,
        );
      }
      return { data: writeData({ ...data, state: "canceled" }) };
    }
    const paymentId = stringOf(input.context?.idempotency_key);
    try {
      await this.#client.orders.cancel(
        data.order_id,
        paymentId ? { actionReference: paymentId } : {},
        paymentId ? { idempotencyKey: cancelKey(this.#options.idempotencyNamespace, paymentId) } : {},
      );
    } catch (error) {
      if (!OrderStateError.isInstance(error)) throw this.#fail("Cancel", error, { orderId: data.order_id });
      this.#logger?.info(`purchase-auth: order ${data.order_id} had nothing left to cancel`);
    }
    return { data: await this.#withOrder(data, data.order_id) };
  }

  /** The payment data refreshed from the service's order. */
  async retrievePayment(input: RetrievePaymentInput): Promise<RetrievePaymentOutput> {
    const data = readData(input.data);
    if (!data.order_id) return { data: writeData(data) };
    return { data: await this.#withOrder(data, data.order_id) };
  }

  /** The status from the service's order when there is one, else from what was last recorded. */
  async getPaymentStatus(input: GetPaymentStatusInput): Promise<GetPaymentStatusOutput> {
    const data = readData(input.data);
    if (!data.order_id) return { status: sessionStatusOfState(data.state), data: writeData(data) };
    const order = await this.#readOrder(data.order_id);
    return { status: sessionStatusOfOrder(order.status), data: writeData(this.#dataWithOrder(data, order)) };
  }

  /**
   * A webhook, verified on the raw body Medusa kept. authorization.succeeded → authorized (or
   * captured for Auto) and authorization.failed → failed, both with the payment session id; the
   * order id and failure reason are first written to the session's data, where the authorization
   * that Medusa's payment workflow runs next reads them. Events that fail verification are logged
   * and ignored (retrying cannot fix them).
   */
  async getWebhookActionAndData(payload: ProviderWebhookPayload["payload"]): Promise<WebhookActionResult> {
    let event: ReturnType<typeof verifyWebhook>;
    try {
      event = verifyWebhook(
        rawBodyOf(payload.rawData),
        headersOf(payload.headers),
        this.#options.webhookSecrets,
        {
          toleranceSeconds: this.#options.webhookToleranceSeconds,
        },
      );
    } catch (error) {
      if (!WebhookVerificationError.isInstance(error)) throw error;
      const level = error.failure === "unsupported_event" ? "info" : "warn";
      this.#logger?.[level](`purchase-auth: webhook ignored (${error.failure}): ${error.message}`);
      return { action: PaymentActions.NOT_SUPPORTED };
    }
    const outcome = mapWebhookEvent(event);
    if (outcome.log) this.#logger?.[outcome.log.level](outcome.log.message);
    if (!outcome.sessionId) return { action: outcome.action };
    if (outcome.update) {
      const known = await this.#records.mergeSessionData(outcome.sessionId, outcome.update);
      if (!known) {
        this.#logger?.info(
          `purchase-auth: webhook ${event.id} names payment session ${outcome.sessionId}, which does not exist (any more) or is not this provider's; ignored`,
        );
        return { action: PaymentActions.NOT_SUPPORTED };
      }
    }
    return { action: outcome.action, data: { session_id: outcome.sessionId, amount: outcome.amount ?? "0" } };
  }

  /** The account holder of a customer: its data holds the customer's stored tokens. */
  async createAccountHolder(input: CreateAccountHolderInput): Promise<CreateAccountHolderOutput> {
    const customerId = input.context.customer.id;
    const data: AccountHolderData = { customer_id: customerId, customer_tokens: [] };
    return { id: customerId, data: { ...data } };
  }

  async retrieveAccountHolder(input: RetrieveAccountHolderInput): Promise<RetrieveAccountHolderOutput> {
    return { id: input.id };
  }

  /**
   * Medusa persists the data returned here. The plugin's workflows pass the new list of tokens as
   * the account holder's data; it is normalised (well-formed entries only) before it is stored.
   */
  async updateAccountHolder(input: UpdateAccountHolderInput): Promise<UpdateAccountHolderOutput> {
    return { data: { ...readAccountHolderData(input.context.account_holder.data) } };
  }

  async deleteAccountHolder(_input: DeleteAccountHolderInput): Promise<DeleteAccountHolderOutput> {
    return {};
  }

  /** The customer's stored tokens. */
  async listPaymentMethods(input: ListPaymentMethodsInput): Promise<ListPaymentMethodsOutput> {
    const holder = readAccountHolderData(input.context?.account_holder?.data);
    return holder.customer_tokens.map((token) => ({ id: token.customer_token, data: { ...token } }));
  }

  /**
   * Checks a customer token before it is stored: it must exist for this merchant and not be in a
   * final state (Denied, Revoked, Cancelled). Returns the entry to store; storing it is the
   * workflow's job (Medusa does not persist payment methods).
   */
  async savePaymentMethod(input: SavePaymentMethodInput): Promise<SavePaymentMethodOutput> {
    const customerToken = stringOf(input.data?.customer_token);
    if (!customerToken) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, "customer_token is required");
    }
    let token: Awaited<ReturnType<PurchaseAuthClient["customerTokens"]["get"]>>;
    try {
      token = await this.#client.customerTokens.get(customerToken);
    } catch (error) {
      throw this.#fail("Checking the customer token", error, {});
    }
    if (FINAL_TOKEN_STATUSES.has(token.status)) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `The customer token cannot be stored: it is ${token.status} (${describeReason(declineReasonOfTokenStatus(token.status))}).`,
      );
    }
    const entry: StoredCustomerToken = {
      customer_token: token.customerToken.toLowerCase(),
      currency: token.currency,
      added_at: new Date().toISOString(),
    };
    return { id: entry.customer_token, data: { ...entry, status: token.status } };
  }

  /** Removing a stored token cancels it at the service: it can never be charged again. */
  async deletePaymentMethod(input: DeletePaymentMethodInput): Promise<DeletePaymentMethodOutput> {
    try {
      await this.#client.customerTokens.cancel(input.data.id);
    } catch (error) {
      if (!NotFoundError.isInstance(error)) throw this.#fail("Cancelling the customer token", error, {});
    }
    return {};
  }

  /** What `util.inspect` and `JSON.stringify` show: never a secret, never the container. */
  toJSON(): Record<string, unknown> {
    const { baseUrl, clientId, scope } = this.#options.client;
    return { identifier: PurchaseAuthProviderService.identifier, baseUrl, clientId, scope };
  }

  [inspect.custom](): string {
    return `PurchaseAuthProviderService ${inspect(this.toJSON())}`;
  }

  async #checkChargeable(customerToken: string, currency: string): Promise<void> {
    let token: Awaited<ReturnType<PurchaseAuthClient["customerTokens"]["get"]>>;
    try {
      token = await this.#client.customerTokens.get(customerToken);
    } catch (error) {
      throw this.#fail("Checking the customer token", error, {});
    }
    const reason = declineReasonOfTokenStatus(token.status);
    if (reason) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `The stored customer token cannot be charged (${describeReason(reason)})`,
      );
    }
    if (token.currency !== currency) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `The stored customer token pays in ${token.currency}, not ${currency} (${describeReason("INVALID_CURRENCY")})`,
      );
    }
  }

  #authorizationRequest(data: PurchaseAuthData, sessionId: string): AuthorizationRequestInput {
    const options = this.#options;
    const reference = data.cart_id && data.cart_id.length <= 50 ? data.cart_id : undefined;
    const { lines } = itemsForAuthorization(
      options.orderLines === "cart" ? data.order_lines : null,
      data.amount!,
      {
        id: reference ?? sessionId,
        description: reference ? `Order of cart ${reference}` : "Order",
        vat: options.defaultVatPercent,
      },
    );
    const schedule = options.attemptSchedule;
    return {
      customerToken: data.customer_token!,
      ...(options.storeId ? { storeId: options.storeId } : {}),
      order: {
        items: lines,
        currency: data.currency!,
        ...(reference ? { reference } : {}),
        // Webhooks carry it back: it is how an event finds its Medusa payment session.
        actionReference: sessionId,
        captureMode: data.capture_mode ?? options.captureMode,
      },
      ...(schedule === "asap"
        ? {}
        : {
            attemptSchedule:
              schedule === "synchronous" ? { preferSynchronous: true } : { relative: schedule.relative },
          }),
    };
  }

  /**
   * Sends the authorization. A decline worth retrying (PAYMENT_FAILED, SERVICE_UNAVAILABLE) is a
   * new attempt with the next key; since every key is derived from the session, a repeat of this
   * whole call replays the same attempts and cannot charge twice.
   */
  async #createAuthorization(
    request: AuthorizationRequestInput,
    keyBase: string,
    sessionId: string,
  ): Promise<CreateAuthorizationResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#client.authorizations.create(request, {
          idempotencyKey: authorizeKey(this.#options.idempotencyNamespace, keyBase, attempt),
        });
      } catch (error) {
        const retry =
          DeclinedError.isInstance(error) && error.retryable && attempt < MAX_SYNCHRONOUS_ATTEMPTS;
        this.#logger?.warn(
          `purchase-auth: authorization of payment session ${sessionId} failed, attempt ${attempt}${retry ? ", trying again" : ""} ${JSON.stringify(logFieldsOf(error))}`,
        );
        if (!retry) throw toMedusaError("Authorization", error);
      }
    }
  }

  #requireOrder(data: PurchaseAuthData, operation: string): string {
    if (data.order_id) return data.order_id;
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      `${operation}: the authorization ${data.authorization_id ?? ""} has no order at the service yet (state ${data.state ?? "unknown"}).`,
    );
  }

  async #nothingLeftToCapture(orderId: string): Promise<boolean> {
    const order = await this.#readOrder(orderId);
    return toCents(order.capturedAmount) + toCents(order.cancelledAmount) >= toCents(order.totalAmount);
  }

  async #readOrder(orderId: string): Promise<Order> {
    try {
      return await this.#client.orders.get(orderId);
    } catch (error) {
      throw this.#fail("Reading the order", error, { orderId });
    }
  }

  async #withOrder(data: PurchaseAuthData, orderId: string): Promise<Record<string, unknown>> {
    return writeData(this.#dataWithOrder(data, await this.#readOrder(orderId)));
  }

  #dataWithOrder(data: PurchaseAuthData, order: Order): PurchaseAuthData {
    return {
      ...data,
      order_id: order.orderId,
      authorization_id: order.authorizationId,
      state: stateOfOrder(order.status),
      captured_amount: order.capturedAmount,
      refunded_amount: order.refundedAmount,
    };
  }

  #fail(operation: string, error: unknown, context: Record<string, unknown>): Error {
    this.#logger?.error(
      `purchase-auth: ${operation} failed ${JSON.stringify({ ...context, ...logFieldsOf(error) })}`,
    );
    return toMedusaError(operation, error);
  }
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function headersOf(headers: Record<string, unknown>): Record<string, string | string[] | undefined> {
  const result: Record<string, string | string[] | undefined> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value === "string" || Array.isArray(value))
      result[name.toLowerCase()] = value as string | string[];
  }
  return result;
}

/** Core's client logs through Medusa's logger, which takes one message (core's start "purchase-auth:"). */
function clientLogger(logger: Logger | undefined) {
  if (!logger) return undefined;
  const line = (message: string, fields?: Record<string, unknown>) =>
    `${message}${fields ? ` ${JSON.stringify(fields)}` : ""}`;
  return {
    debug: (message: string, fields?: Record<string, unknown>) => logger.debug(line(message, fields)),
    info: (message: string, fields?: Record<string, unknown>) => logger.info(line(message, fields)),
    warn: (message: string, fields?: Record<string, unknown>) => logger.warn(line(message, fields)),
    error: (message: string, fields?: Record<string, unknown>) => logger.error(line(message, fields)),
  };
}
