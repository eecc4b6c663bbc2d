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
import { describeReason, isUncertain, logFieldsOf, toMedusaError } from "./errors";
import { authorizeKey, cancelKey, captureToKey, refundToKey, releaseKey } from "./idempotency-keys";
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
        authorize_attempt: null,
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

  /**
   * Deleting a session (Medusa does it when a cart changes) must not leave money behind: a session
   * whose authorization outcome is unknown is first resolved with the SAME idempotency key, and
   * any order found (or already known) is released: what is not captured is cancelled, what was
   * captured is refunded. When that cannot be done now, this throws, so Medusa keeps the session
   * instead of dropping it (and a new session would charge again).
   */
  async deletePayment(input: DeletePaymentInput): Promise<DeletePaymentOutput> {
    let data = readData(input.data);
    const wasUnknown = data.state === "unknown";
    if (wasUnknown) {
      const sessionId = data.session_id;
      if (!sessionId || !data.customer_token || !data.amount || !data.currency) {
        throw new MedusaError(
          MedusaError.Types.UNEXPECTED_STATE,
          "purchase-auth: this payment session's authorization outcome is unknown and cannot be resolved; check the service before deleting it.",
        );
      }
      const outcome = await this.#createAuthorization(
        this.#authorizationRequest(data, sessionId),
        sessionId,
        data.authorize_attempt ?? 1,
      );
      if (outcome.kind === "uncertain") {
        throw new MedusaError(
          MedusaError.Types.UNEXPECTED_STATE,
          `Payment session ${sessionId}: the service has not told whether authorization attempt ${outcome.attempt} went through, so the session cannot be deleted yet. Try again later (the same idempotency key is reused, it cannot charge twice).`,
        );
      }
      if (outcome.kind === "declined") return { data: writeData({ ...data, state: "failed" }) };
      if (!outcome.result.orderId) {
        throw new MedusaError(
          MedusaError.Types.NOT_ALLOWED,
          `Payment session ${sessionId}: authorization ${outcome.result.authorizationId} is still pending at the service; the session cannot be deleted until it is settled.`,
        );
      }
      data = { ...data, authorization_id: outcome.result.authorizationId, order_id: outcome.result.orderId };
    }
    // Release what Medusa never learned about (an outcome that was unknown), and an uncaptured hold,
    // as Medusa's own providers do. Money a known session captured is never refunded on a delete.
    if (data.order_id && (wasUnknown || data.state === "authorized")) {
      const order = await this.#release(data.order_id, data.session_id ?? data.order_id);
      return { data: writeData({ ...this.#dataWithOrder(data, order), authorize_attempt: null }) };
    }
    return { data: writeData(data) };
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
    // After an unknown outcome the same attempt is repeated with the same key: it learns the outcome.
    const firstAttempt = data.state === "unknown" ? (data.authorize_attempt ?? 1) : 1;
    const outcome = await this.#createAuthorization(
      this.#authorizationRequest(data, sessionId),
      sessionId,
      firstAttempt,
    );
    if (outcome.kind === "declined") throw outcome.error;
    if (outcome.kind === "uncertain") {
      // Not a failure: the service may have authorized (even captured). Medusa stores the data of an
      // "error" answer, so the next authorizePayment (or deletePayment) repeats this same attempt.
      return {
        status: PaymentSessionStatus.ERROR,
        data: writeData({
          ...data,
          session_id: sessionId,
          state: "unknown",
          authorize_attempt: outcome.attempt,
          failure_reason: null,
        }),
      };
    }
    const result = outcome.result;
    const authorized: PurchaseAuthData = {
      ...data,
      session_id: sessionId,
      authorization_id: result.authorizationId,
      failure_reason: null,
      authorize_attempt: null,
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
   * (its id is the call's context key), so partial captures capture what the admin entered.
   *
   * Medusa deletes its capture when this throws, so a retry comes with a new capture id. The key is
   * therefore derived from facts that survive: the order and the captured total this capture brings
   * it to (what this provider recorded before, plus this amount). Before sending, the service's
   * order is read: only what is still missing up to that total is captured, so a capture whose
   * answer was lost (and that applied) is not applied twice, even after the key's hour. A capture
   * the service already did (Auto mode, or a retry) counts as done; a cancelled or expired order is
   * an error, never "captured".
   */
  async capturePayment(input: CapturePaymentInput): Promise<CapturePaymentOutput> {
    const data = readData(input.data);
    if (data.capture_mode === "Auto" && data.state === "captured") return { data: writeData(data) };
    const orderId = this.#requireOrder(data, "Capture");
    const captureId = stringOf(input.context?.idempotency_key);
    const amount = captureId ? toWireAmount(await this.#records.captureAmount(captureId)) : undefined;
    const before = await this.#readOrder(orderId);
    const target =
      amount === undefined
        ? toCents(before.totalAmount)
        : toCents(data.captured_amount ?? "0.00") + toCents(amount);
    const missing = target - toCents(before.capturedAmount);
    if (missing <= 0n) {
      this.#logger?.info(
        `purchase-auth: order ${orderId} already has ${before.capturedAmount} captured; capture ${captureId} counts as done`,
      );
      return { data: writeData(this.#dataWithOrder(data, before)) };
    }
    try {
      await this.#client.orders.capture(
        orderId,
        { amount: formatCents(missing), ...(captureId ? { actionReference: captureId } : {}) },
        { idempotencyKey: captureToKey(this.#options.idempotencyNamespace, orderId, formatCents(target)) },
      );
    } catch (error) {
      if (OrderStateError.isInstance(error)) {
        const order = await this.#readOrder(orderId);
        if (toCents(order.capturedAmount) < target) {
          this.#logger?.error(
            `purchase-auth: Capture failed ${JSON.stringify({ orderId, status: order.status, capturedAmount: order.capturedAmount, cancelledAmount: order.cancelledAmount, ...logFieldsOf(error) })}`,
          );
          throw new MedusaError(
            MedusaError.Types.PAYMENT_REQUIRES_MORE_ERROR,
            `Capture: the order at the service cannot be captured any more (status ${order.status}, captured ${order.capturedAmount}, released ${order.cancelledAmount} of ${order.totalAmount}); nothing was captured.`,
          );
        }
      } else {
        throw this.#fail("Capture", error, { orderId });
      }
    }
    const after = await this.#readOrder(orderId);
    if (toCents(after.capturedAmount) < target) {
      throw new MedusaError(
        MedusaError.Types.UNEXPECTED_STATE,
        `Capture: the service reports ${after.capturedAmount} captured on order ${orderId}, less than the ${formatCents(target)} expected; check the order at the service.`,
      );
    }
    return { data: writeData(this.#dataWithOrder(data, after)) };
  }

  /**
   * Refunds `amount` (full or partial) of what was captured. Like a capture, the key derives from
   * the order and the refunded total this refund brings it to, and only what is still missing up to
   * that total is sent: a refund whose answer was lost is not refunded twice by Medusa's retry.
   */
  async refundPayment(input: RefundPaymentInput): Promise<RefundPaymentOutput> {
    const data = readData(input.data);
    const orderId = this.#requireOrder(data, "Refund");
    const cents = toCentsRounded(input.amount);
    if (cents <= 0n) throw new MedusaError(MedusaError.Types.INVALID_DATA, "A refund must be above 0.");
    const refundId = stringOf(input.context?.idempotency_key);
    const before = await this.#readOrder(orderId);
    const target = toCents(data.refunded_amount ?? "0.00") + cents;
    const missing = target - toCents(before.refundedAmount);
    if (missing <= 0n) {
      this.#logger?.info(
        `purchase-auth: order ${orderId} already has ${before.refundedAmount} refunded; refund ${refundId} counts as done`,
      );
      return { data: writeData(this.#dataWithOrder(data, before)) };
    }
    try {
      await this.#client.orders.refund(
        orderId,
        { amount: formatCents(missing), ...(refundId ? { actionReference: refundId } : {}) },
        { idempotencyKey: refundToKey(this.#options.idempotencyNamespace, orderId, formatCents(target)) },
      );
    } catch (error) {
      throw this.#fail("Refund", error, { orderId });
    }
    return { data: await this.#withOrder(data, orderId) };
  }

  /**
   * Releases what is not captured. An order already cancelled or expired counts as done; an order
   * with captured money is an error (cancelling cannot give it back: refund it instead), never
   * reported as canceled. A session still pending at the service has no order
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
      const order = await this.#readOrder(data.order_id);
      if (
        toCents(order.capturedAmount) > 0n ||
        (order.status !== "Cancelled" && order.status !== "Expired")
      ) {
        this.#logger?.error(
          `purchase-auth: Cancel failed ${JSON.stringify({ orderId: data.order_id, status: order.status, capturedAmount: order.capturedAmount, ...logFieldsOf(error) })}`,
        );
        throw new MedusaError(
          MedusaError.Types.NOT_ALLOWED,
          `Cancel: the order at the service has ${order.capturedAmount} captured (status ${order.status}); it cannot be canceled, refund it instead.`,
        );
      }
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
   * Sends the authorization, from attempt `firstAttempt` on. A decline worth retrying
   * (PAYMENT_FAILED, SERVICE_UNAVAILABLE) is a new attempt with the next key; since every key is
   * derived from the session and the attempt number, a repeat replays the same attempts and cannot
   * charge twice. An uncertain outcome (timeout, 503, lost answer) is returned, never thrown: the
   * caller must remember the attempt and repeat it with the same key.
   */
  async #createAuthorization(
    request: AuthorizationRequestInput,
    sessionId: string,
    firstAttempt: number,
  ): Promise<
    | { kind: "done"; result: CreateAuthorizationResult }
    | { kind: "declined"; error: Error }
    | { kind: "uncertain"; attempt: number }
  > {
    for (let attempt = firstAttempt; ; attempt++) {
      try {
        const result = await this.#client.authorizations.create(request, {
          idempotencyKey: authorizeKey(this.#options.idempotencyNamespace, sessionId, attempt),
        });
        return { kind: "done", result };
      } catch (error) {
        const uncertain = isUncertain(error);
        const retry =
          DeclinedError.isInstance(error) && error.retryable && attempt < MAX_SYNCHRONOUS_ATTEMPTS;
        this.#logger?.warn(
          `purchase-auth: authorization of payment session ${sessionId} ${uncertain ? "has an unknown outcome" : "failed"}, attempt ${attempt}${retry ? ", trying again" : ""} ${JSON.stringify(logFieldsOf(error))}`,
        );
        if (uncertain) return { kind: "uncertain", attempt };
        if (!retry) return { kind: "declined", error: toMedusaError("Authorization", error) };
      }
    }
  }

  /**
   * Gives back everything of an order: cancels what is not captured and refunds what was captured
   * and not yet refunded. Keys derive from `keyBase` (the session), so a repeat cannot refund twice.
   */
  async #release(orderId: string, keyBase: string): Promise<Order> {
    const namespace = this.#options.idempotencyNamespace;
    let order = await this.#readOrder(orderId);
    try {
      if (order.status === "NotActivated" || order.status === "PartActivated") {
        await this.#client.orders.cancel(
          orderId,
          { actionReference: keyBase },
          { idempotencyKey: releaseKey(namespace, "cancel", keyBase) },
        );
        order = await this.#readOrder(orderId);
      }
      const toRefund = toCents(order.capturedAmount) - toCents(order.refundedAmount);
      if (toRefund > 0n) {
        await this.#client.orders.refund(
          orderId,
          { amount: formatCents(toRefund), actionReference: keyBase },
          { idempotencyKey: releaseKey(namespace, "refund", keyBase) },
        );
        order = await this.#readOrder(orderId);
      }
    } catch (error) {
      throw this.#fail("Releasing the order of a deleted payment session", error, { orderId });
    }
    this.#logger?.info(
      `purchase-auth: order ${orderId} of deleted payment session ${keyBase} released (${order.status}, refunded ${order.refundedAmount})`,
    );
    return order;
  }

  #requireOrder(data: PurchaseAuthData, operation: string): string {
    if (data.order_id) return data.order_id;
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      `${operation}: the authorization ${data.authorization_id ?? ""} has no order at the service yet (state ${data.state ?? "unknown"}).`,
    );
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
