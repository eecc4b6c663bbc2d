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
import { AbstractPaymentProvider, MedusaError, PaymentSessionStatus } from "@medusajs/framework/utils";
import {
  type CustomerToken,
  type Order,
  PurchaseAuthClient,
  toCents,
  type WebhookEvent,
} from "@purchase-auth/core";
import { toWireAmount } from "./amounts";
import {
  authorizePayment,
  deletePayment,
  finishRelease,
  type RecordReleaseIntent,
  resolveUnknownAuthorization,
  type UnknownResolution,
} from "./authorize-payment";
import { cancelCustomerToken, checkChargeable, readCustomerToken, tokenToStore } from "./customer-tokens";
import { type PurchaseAuthProviderOptions, resolveProviderOptions } from "./options";
import { capture, heldByRecordedPayment, refund, releaseAll, releaseUncaptured } from "./order-operations";
import { outcomeOverdueAt } from "./outcome-overdue";
import { PaymentModuleRecords } from "./payment-module-records";
import { dataWithOrder, type ProviderContext, readOrder, stringOf } from "./provider-context";
import { laterState, type PurchaseAuthData, readData, writeData } from "./session-data";
import { sessionStatusOfOrder, sessionStatusOfState } from "./status-mapping";
import {
  type AccountHolderData,
  chooseToken,
  readAccountHolderData,
  type StoredCustomerToken,
} from "./stored-tokens";
import { verifiedEvent, webhookActionAndData } from "./webhooks";

type Cradle = Record<string, unknown> & { logger?: Logger };

/**
 * Medusa payment provider for the Purchase Authorization Service: charges a logged-in customer's
 * stored customer token. Registered as `pp_purchase-auth_<id>`. One instance serves every request
 * (Medusa keeps providers as singletons), so it holds configuration and the client only. The work
 * is in files by concern: authorize-payment (authorize, delete, unknown outcomes), order-operations
 * (capture, refund, cancel, release), customer-tokens, webhooks.
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

  readonly #context: ProviderContext;

  constructor(cradle: Cradle, options: PurchaseAuthProviderOptions) {
    // The base class keeps its config on `this`: it gets a copy without the secrets.
    super(cradle, { ...options, clientSecret: "[redacted]", webhookSecret: "[redacted]" });
    const resolved = resolveProviderOptions(options);
    this.#context = {
      options: resolved,
      logger: cradle.logger,
      client: new PurchaseAuthClient({ ...resolved.client, logger: clientLogger(cradle.logger) }),
      records: new PaymentModuleRecords(cradle),
    };
  }

  /**
   * A payment session: nothing is charged. Picks the customer token (one stored for the logged-in
   * customer and not flagged by the service; the storefront may name which) and checks at the
   * service that it exists, is Active and pays in the cart's currency. Of the storefront's `data`
   * only `customer_token` is read.
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
    await checkChargeable(this.#context, token.customer_token, currency);
    return {
      id: sessionId ?? token.customer_token,
      status: PaymentSessionStatus.PENDING,
      data: writeData({
        ...readData(undefined),
        session_id: sessionId ?? null,
        customer_token: token.customer_token,
        amount,
        currency,
        capture_mode: this.#context.options.captureMode,
        state: "initiated",
      }),
    };
  }

  /**
   * Medusa core never calls this; the plugin's cart-completion middleware does, server-side, to add
   * the cart's order lines (and the current amount) before authorization. Once authorized, nothing
   * changes; a session whose stored state moved on since the caller read it keeps what is stored.
   */
  async updatePayment(input: UpdatePaymentInput): Promise<UpdatePaymentOutput> {
    const data = readData(input.data);
    // Medusa writes what this returns over the session's data, and the caller's data was read
    // earlier (the middleware reads the cart, then updates): a state written meanwhile (a concurrent
    // completion authorized the session, a webhook merged its success) is kept, never moved back.
    const stored = data.session_id ? await this.#context.records.sessionData(data.session_id) : undefined;
    if (
      stored?.state &&
      stored.state !== data.state &&
      laterState(data.state, stored.state) === stored.state
    ) {
      return { data: writeData(stored) };
    }
    if (data.state !== null && data.state !== "initiated") return { data: writeData(data) };
    return {
      data: writeData({
        ...data,
        amount: toWireAmount(input.amount),
        currency: input.currency_code.toUpperCase(),
      }),
    };
  }

  /** See authorize-payment.ts: releases what a replaced session holds, or refuses while unknown. */
  async deletePayment(input: DeletePaymentInput): Promise<DeletePaymentOutput> {
    return { data: writeData(await deletePayment(this.#context, readData(input.data), input.data ?? null)) };
  }

  /** See authorize-payment.ts. */
  async authorizePayment(input: AuthorizePaymentInput): Promise<AuthorizePaymentOutput> {
    const { status, data } = await authorizePayment(
      this.#context,
      readData(input.data),
      stringOf(input.context?.idempotency_key),
    );
    return { status, data: writeData(data) };
  }

  /**
   * Manual capture up to the total Medusa's captures of the payment now add up to (see
   * order-operations.ts). With Auto capture the service already captured: done.
   */
  async capturePayment(input: CapturePaymentInput): Promise<CapturePaymentOutput> {
    const data = readData(input.data);
    if (data.capture_mode === "Auto" && data.state === "captured") return { data: writeData(data) };
    return { data: writeData(await capture(this.#context, data, stringOf(input.context?.idempotency_key))) };
  }

  async refundPayment(input: RefundPaymentInput): Promise<RefundPaymentOutput> {
    const data = readData(input.data);
    return {
      data: writeData(
        await refund(this.#context, data, input.amount, stringOf(input.context?.idempotency_key)),
      ),
    };
  }

  /**
   * Releases what is not captured. An order already cancelled or expired counts as done; an order
   * with captured money is an error ("refund it instead"). A session still pending at the service
   * has no order yet: it is marked canceled, and a late success is voided when it arrives. The
   * rollback of a duplicate payment of a session that already has one releases nothing.
   */
  async cancelPayment(input: CancelPaymentInput): Promise<CancelPaymentOutput> {
    const data = readData(input.data);
    if (!data.order_id) {
      return {
        data: writeData({ ...data, state: "canceled", medusa_canceled_at: new Date().toISOString() }),
      };
    }
    const keyBase = stringOf(input.context?.idempotency_key);
    // A duplicate payment's rollback (no payment of that id exists): the recorded one keeps the order.
    if (await heldByRecordedPayment(this.#context, data, keyBase)) return { data: writeData(data) };
    const release = { keyBase, paymentId: keyBase };
    return { data: writeData(await releaseUncaptured(this.#context, data, release, false)) };
  }

  /** The payment data refreshed from the service's order. */
  async retrievePayment(input: RetrievePaymentInput): Promise<RetrievePaymentOutput> {
    const data = readData(input.data);
    if (!data.order_id) return { data: writeData(data) };
    return { data: writeData(dataWithOrder(data, await readOrder(this.#context, data.order_id))) };
  }

  /** The status from the service's order when there is one, else from what was last recorded. */
  async getPaymentStatus(input: GetPaymentStatusInput): Promise<GetPaymentStatusOutput> {
    const data = readData(input.data);
    if (!data.order_id) return { status: sessionStatusOfState(data.state), data: writeData(data) };
    const order = await readOrder(this.#context, data.order_id);
    return { status: sessionStatusOfOrder(order.status), data: writeData(dataWithOrder(data, order)) };
  }

  /** See webhooks.ts. */
  async getWebhookActionAndData(payload: ProviderWebhookPayload["payload"]): Promise<WebhookActionResult> {
    return await webhookActionAndData(this.#context, payload);
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
   * Checks a customer token before it is stored (see customer-tokens.ts). Returns the entry to
   * store; storing it is the workflow's job (Medusa does not persist payment methods).
   */
  async savePaymentMethod(input: SavePaymentMethodInput): Promise<SavePaymentMethodOutput> {
    const customerToken = stringOf(input.data?.customer_token);
    if (!customerToken) throw new MedusaError(MedusaError.Types.INVALID_DATA, "customer_token is required");
    const entry = await tokenToStore(this.#context, customerToken);
    return { id: entry.customer_token, data: { ...entry } };
  }

  /** Removing a stored token cancels it at the service: it can never be charged again. */
  async deletePaymentMethod(input: DeletePaymentMethodInput): Promise<DeletePaymentMethodOutput> {
    await cancelCustomerToken(this.#context, input.data.id);
    return {};
  }

  // ---- Beyond Medusa's provider interface: used by the plugin's subscribers, job and routes. ----

  /** A webhook's verified event (undefined when it does not verify). */
  verifyWebhookEvent(payload: ProviderWebhookPayload["payload"]): WebhookEvent | undefined {
    return verifiedEvent(this.#context, payload);
  }

  /** The service's order of a payment's data (undefined before the service created one). */
  async serviceOrder(data: Record<string, unknown> | null | undefined): Promise<Order | undefined> {
    const orderId = readData(data ?? undefined).order_id;
    return orderId ? await readOrder(this.#context, orderId) : undefined;
  }

  /** The payment data with the service's current figures. */
  async refreshedData(data: Record<string, unknown> | null | undefined): Promise<PurchaseAuthData> {
    const current = readData(data ?? undefined);
    if (!current.order_id) return current;
    return dataWithOrder(current, await readOrder(this.#context, current.order_id));
  }

  /** Releases the uncaptured remainder of a payment (its Medusa order was canceled). */
  async releaseRemainder(
    data: Record<string, unknown> | null | undefined,
    paymentId: string,
  ): Promise<PurchaseAuthData> {
    const release = { keyBase: `remainder:${paymentId}`, paymentId };
    return await releaseUncaptured(this.#context, readData(data ?? undefined), release, true);
  }

  /** Gives back everything of a service order Medusa does not account for. */
  async releaseOrder(orderId: string, keyBase: string, why: string): Promise<Order> {
    return await releaseAll(this.#context, orderId, keyBase, why);
  }

  /**
   * Resolves a session whose authorization outcome is unknown (the reconciler); `recordIntent` marks
   * it releasing before an order found is released.
   */
  async resolveUnknown(
    data: Record<string, unknown> | null | undefined,
    now?: Date,
    recordIntent?: RecordReleaseIntent,
  ): Promise<UnknownResolution> {
    return await resolveUnknownAuthorization(this.#context, readData(data ?? undefined), now, recordIntent);
  }

  /** Sends again, with the same keys, the release of a session left releasing (see isReleasing). */
  async finishRelease(data: Record<string, unknown> | null | undefined): Promise<UnknownResolution> {
    return await finishRelease(this.#context, readData(data ?? undefined));
  }

  /**
   * When a session this provider's service accepted (202) is overdue (epoch ms): its last scheduled
   * attempt or its last news, whichever is later, plus the `outcomeGraceMs` option.
   */
  outcomeOverdueAt(data: Record<string, unknown> | null | undefined, lastNewsAt: Date): number {
    return outcomeOverdueAt(readData(data ?? undefined), lastNewsAt, this.#context.options.outcomeGraceMs);
  }

  /**
   * The entry to store for a customer token, checked at the service (savePaymentMethod without the
   * payment module in between: its createPaymentMethods merges errors into one plain Error, which
   * turned "unknown token" into an HTTP 500).
   */
  async checkTokenToStore(customerToken: string): Promise<StoredCustomerToken> {
    return await tokenToStore(this.#context, customerToken);
  }

  /** The service's view of a customer token. */
  async customerToken(customerToken: string): Promise<CustomerToken> {
    return await readCustomerToken(this.#context, customerToken);
  }

  /** Cancels a customer token at the service. */
  async cancelToken(customerToken: string): Promise<void> {
    await cancelCustomerToken(this.#context, customerToken);
  }

  /** What `util.inspect` and `JSON.stringify` show: never a secret, never the container. */
  toJSON(): Record<string, unknown> {
    const { baseUrl, clientId, scope } = this.#context.options.client;
    return { identifier: PurchaseAuthProviderService.identifier, baseUrl, clientId, scope };
  }

  [inspect.custom](): string {
    return `PurchaseAuthProviderService ${inspect(this.toJSON())}`;
  }
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
