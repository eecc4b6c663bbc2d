import { inspect } from "node:util";
import type { IPaymentModuleService, PaymentCustomerDTO, PaymentDTO } from "@medusajs/framework/types";
import { Modules } from "@medusajs/framework/utils";
import { moduleIntegrationTestRunner } from "@medusajs/test-utils";
import { type CustomerTokenStatus, signWebhook } from "@purchase-auth/core";
import { type MerchantCredentials, type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { ensureDatabase } from "purchase-auth-test-postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import purchaseAuthProvider from "../src/providers/purchase-auth/index";
import type { PurchaseAuthProviderService } from "../src/providers/purchase-auth/service";
import { paymentModuleFolder, storeCustomerToken } from "./support/payment-module";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver";

// The payment module with the provider, on real PostgreSQL, against the sandbox over HTTP.
// Three provider ids share one sandbox merchant: manual capture (synchronous), auto capture
// (synchronous) and manual capture answered asynchronously (202, then a webhook).

const DB_NAME = "purchase-auth-medusa-module";
const WEBHOOK_SECRET = "whsec-module-test";

/** Filled in beforeAll, before Medusa loads (and validates) the providers in beforeEach. */
const connection: Record<string, string> = {};
const logLines: string[] = [];
const logger = {
  info: (message: string) => logLines.push(message),
  warn: (message: string) => logLines.push(message),
  error: (message: string) => logLines.push(message),
  debug: () => {},
  log: () => {},
  activity: () => "",
  progress: () => {},
  failure: () => ({}),
  success: () => ({}),
  panic: () => {},
  shouldLog: () => false,
  setLogLevel: () => {},
  unsetLogLevel: () => {},
};

function providerConfig(id: string, extra: Record<string, unknown>) {
  // The options object is shared by reference, so beforeAll can fill in the sandbox's address.
  const options = new Proxy(extra, {
    get: (target, key: string) => (key in target ? target[key] : connection[key]),
    has: (target, key: string) => key in target || key in connection,
    ownKeys: (target) => [...new Set([...Reflect.ownKeys(target), ...Reflect.ownKeys(connection)])],
    getOwnPropertyDescriptor: (target, key: string) => ({
      value: key in target ? target[key] : connection[key],
      enumerable: true,
      configurable: true,
    }),
  });
  return { resolve: purchaseAuthProvider, id, options };
}

const MANUAL = "pp_purchase-auth_manual";
const AUTO = "pp_purchase-auth_auto";
const ASYNC = "pp_purchase-auth_async";
const ASYNC_AUTO = "pp_purchase-auth_async-auto";
const FAST = "pp_purchase-auth_fast";
const FAST_AUTO = "pp_purchase-auth_fast-auto";

let sandbox: SandboxServer;
let merchant: MerchantCredentials;
let receiver: WebhookReceiver;

beforeAll(async () => {
  await ensureDatabase(
    {
      host: process.env.DB_HOST!,
      port: Number(process.env.DB_PORT),
      user: process.env.DB_USERNAME!,
      password: process.env.DB_PASSWORD!,
    },
    DB_NAME,
  );
  sandbox = await startSandbox();
  merchant = sandbox.createMerchant();
  receiver = await startWebhookReceiver();
  sandbox.setWebhooks({ merchantId: merchant.merchantId, urls: [receiver.url], secrets: [WEBHOOK_SECRET] });
  Object.assign(connection, {
    baseUrl: sandbox.url,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    scope: merchant.scope,
    webhookSecret: WEBHOOK_SECRET,
  });
});

afterAll(async () => {
  await receiver?.close();
  await sandbox?.close();
});

let customerCount = 0;
function newCustomer(): PaymentCustomerDTO {
  customerCount += 1;
  return { id: `cus_test_${customerCount}`, email: `buyer${customerCount}@example.com` };
}

function newToken(input: { status?: CustomerTokenStatus; currency?: string; funds?: string } = {}): string {
  return sandbox.createCustomerToken({ merchantId: merchant.merchantId, ...input }).customerToken;
}

moduleIntegrationTestRunner<IPaymentModuleService>({
  moduleName: Modules.PAYMENT,
  resolve: paymentModuleFolder(),
  dbName: DB_NAME,
  injectedDependencies: { logger },
  moduleOptions: {
    providers: [
      providerConfig("manual", {}),
      providerConfig("auto", { captureMode: "Auto" }),
      providerConfig("async", { attemptSchedule: "asap", defaultVatPercent: 25 }),
      providerConfig("async-auto", { attemptSchedule: "asap", captureMode: "Auto" }),
      // No retries in the client: an unknown outcome reaches the provider at once.
      providerConfig("fast", { maxRetries: 0 }),
      providerConfig("fast-auto", { maxRetries: 0, captureMode: "Auto" }),
    ],
  },
  testSuite: ({ service: payment }) => {
    /** A logged-in customer with one stored token, and a payment session for `amount` EUR. */
    async function openSession(
      providerId: string,
      amount: number | string,
      token = newToken(),
      data: Record<string, unknown> = {},
    ) {
      const customer = newCustomer();
      const holder = await storeCustomerToken(payment, providerId, customer, token);
      const collection = await payment.createPaymentCollections({ amount, currency_code: "eur" });
      const session = await payment.createPaymentSession(collection.id, {
        provider_id: providerId,
        amount,
        currency_code: "eur",
        data,
        context: { customer, account_holder: holder },
      });
      return { session, customer, holder, token, collection };
    }

    /** Authorizes a session that must become a payment at once (not pending). */
    async function authorize(sessionId: string): Promise<PaymentDTO> {
      const authorized = await payment.authorizePaymentSession(sessionId, {});
      if (!authorized) throw new Error(`payment session ${sessionId} was not authorized`);
      return authorized;
    }

    async function paymentWithCaptures(id: string): Promise<PaymentDTO> {
      return await payment.retrievePayment(id, { relations: ["captures", "refunds"] });
    }

    it("initiates without charging, authorizes, captures partially twice and refunds part", async () => {
      const { session, token } = await openSession(MANUAL, 120.5, undefined, {
        // Storefront data is allow-listed: only customer_token is read; the rest is ignored.
        order_lines: [{ id: "x", description: "fake", unitPrice: "0.01", quantity: 1, vat: "0" }],
        amount: "0.01",
      });
      expect(session.status).toBe("pending");
      expect(session.data).toMatchObject({ session_id: session.id, customer_token: token, amount: "120.50" });
      expect(session.data.order_lines).toBeNull();
      expect(sandbox.authorizations({ merchantId: merchant.merchantId, customerToken: token })).toHaveLength(
        0,
      );

      const authorized = await authorize(session.id);
      const orderId = authorized.data?.order_id as string;
      expect(authorized.data).toMatchObject({
        session_id: session.id,
        state: "authorized",
        captured_amount: "0.00",
      });
      const [order] = sandbox
        .orders({ merchantId: merchant.merchantId })
        .filter((o) => o.orderId === orderId);
      expect(order).toMatchObject({ status: "NotActivated", totalAmount: "120.50", captureMode: "Manual" });
      expect(order?.items).toEqual([
        { id: session.id, description: "Order", unitPrice: "120.50", quantity: "1", vat: "0" },
      ]);

      // Medusa does not pass the capture amount; the provider reads it from the recorded capture.
      await payment.capturePayment({ payment_id: authorized.id, amount: 20.25 });
      expect(sandbox.orders().find((o) => o.orderId === orderId)).toMatchObject({
        status: "PartActivated",
        capturedAmount: "20.25",
      });
      await payment.capturePayment({ payment_id: authorized.id, amount: 100.25 });
      expect(sandbox.orders().find((o) => o.orderId === orderId)).toMatchObject({
        status: "Activated",
        capturedAmount: "120.50",
      });

      // The module hands refundPayment its raw BigNumber ({ value, precision }).
      await payment.refundPayment({ payment_id: authorized.id, amount: 15.1 });
      const refunded = sandbox.orders().find((o) => o.orderId === orderId);
      expect(refunded).toMatchObject({ status: "PartReturned", refundedAmount: "15.10" });
      const stored = await paymentWithCaptures(authorized.id);
      expect(stored.captures).toHaveLength(2);
      expect(stored.refunds).toHaveLength(1);
      expect(stored.data).toMatchObject({
        session_id: session.id,
        order_id: orderId,
        authorization_id: order?.authorizationId,
        captured_amount: "120.50",
        refunded_amount: "15.10",
      });
      expect(JSON.stringify(stored.data)).not.toContain(merchant.clientSecret);
      const provider = providerOf(payment, MANUAL);
      expect(inspect(provider)).not.toContain(merchant.clientSecret);
      expect(JSON.stringify(provider)).not.toContain(merchant.clientSecret);
      expect(inspect(provider)).not.toContain(WEBHOOK_SECRET);
      expect(logLines.join("\n")).not.toContain(merchant.clientSecret);
    });

    it("with captureMode Auto, Medusa records the capture the service made", async () => {
      const { session } = await openSession(AUTO, "49.90");
      const authorized = await authorize(session.id);
      const stored = await paymentWithCaptures(authorized.id);
      expect(stored.captured_at).toBeTruthy();
      expect(stored.captures).toHaveLength(1);
      const order = sandbox.orders().find((o) => o.orderId === stored.data?.order_id);
      expect(order).toMatchObject({ status: "Activated", capturedAmount: "49.90", captureMode: "Auto" });
      // A capture asked for anyway (e.g. a retry) is already done at the service: success, nothing sent.
      const operations = order?.operations.length ?? 0;
      const again = await providerOf(payment, AUTO).capturePayment({
        data: stored.data!,
        context: { idempotency_key: "capt_retry" },
      });
      expect(again.data).toMatchObject({ state: "captured", order_id: order?.orderId });
      expect(sandbox.orders().find((o) => o.orderId === order?.orderId)?.operations).toHaveLength(operations);
    });

    it("a repeated manual capture counts as done and sends nothing twice", async () => {
      const { session } = await openSession(MANUAL, 10);
      const authorized = await authorize(session.id);
      await payment.capturePayment({ payment_id: authorized.id });
      const stored = await paymentWithCaptures(authorized.id);
      const captureId = stored.captures![0]!.id;
      const orderId = stored.data?.order_id as string;
      const operations = sandbox.orders().find((o) => o.orderId === orderId)?.operations.length;
      const provider = providerOf(payment, MANUAL);
      // The same capture again (Medusa retrying): the service replays its first answer.
      await provider.capturePayment({ data: authorized.data!, context: { idempotency_key: captureId } });
      // Another capture of a fully captured order: "already captured" is success.
      const other = await provider.capturePayment({ data: authorized.data!, context: {} });
      expect(other.data).toMatchObject({ state: "captured", captured_amount: "10.00" });
      expect(sandbox.orders().find((o) => o.orderId === orderId)?.operations).toHaveLength(operations!);
    });

    it("cancels what is not captured, and reports statuses from the service's order", async () => {
      const { session } = await openSession(MANUAL, 42);
      const authorized = await authorize(session.id);
      const provider = providerOf(payment, MANUAL);
      expect((await provider.getPaymentStatus({ data: authorized.data! })).status).toBe("authorized");
      const canceled = await payment.cancelPayment(authorized.id);
      expect(canceled.canceled_at).toBeTruthy();
      const order = sandbox.orders().find((o) => o.orderId === authorized.data?.order_id);
      expect(order).toMatchObject({ status: "Cancelled", cancelledAmount: "42.00" });
      const status = await provider.getPaymentStatus({ data: authorized.data! });
      expect(status).toMatchObject({
        status: "canceled",
        data: { state: "canceled", session_id: session.id },
      });
      // Cancelling again has nothing left to release: still success.
      const again = await provider.cancelPayment({
        data: authorized.data!,
        context: { idempotency_key: "pay_other" },
      });
      expect(again.data).toMatchObject({ state: "canceled" });
      const retrieved = await provider.retrievePayment({ data: authorized.data! });
      expect(retrieved.data).toMatchObject({ order_id: order?.orderId, captured_amount: "0.00" });
    });

    it("answers 202 with pending_authorization; the signed webhook authorizes the session", async () => {
      const { session } = await openSession(ASYNC, 30);
      const pending = await payment.authorizePaymentSession(session.id, {});
      expect(pending).toBeNull(); // Medusa's answer for pending_authorization: no payment yet
      const [afterAuthorize] = await payment.listPaymentSessions({ id: session.id });
      expect(afterAuthorize?.status).toBe("pending_authorization");
      expect(afterAuthorize?.data).toMatchObject({ state: "pending_authorization", order_id: null });

      await sandbox.settle();
      const [delivery] = receiver
        .ofType("authorization.succeeded")
        .filter((d) => d.rawBody.includes(session.id));
      expect(delivery).toBeDefined();
      const webhook = {
        data: JSON.parse(delivery!.rawBody.toString()),
        rawData: delivery!.rawBody,
        headers: delivery!.headers,
      };
      const result = await payment.getWebhookActionAndData({
        provider: "purchase-auth_async",
        payload: webhook,
      });
      expect(result).toEqual({ action: "authorized", data: { session_id: session.id, amount: "30.00" } });

      // What Medusa's processPaymentWorkflow does next: authorize the session, now with the order id.
      const authorized = await authorize(session.id);
      const orderId = authorized?.data?.order_id as string;
      expect(sandbox.orders().find((o) => o.orderId === orderId)).toMatchObject({
        status: "NotActivated",
        totalAmount: "30.00",
        // One line for the whole amount, with the configured default VAT.
        items: [{ id: session.id, description: "Order", unitPrice: "30.00", quantity: "1", vat: "25" }],
      });

      // The same event again (redelivery) changes nothing.
      const again = await payment.getWebhookActionAndData({
        provider: "purchase-auth_async",
        payload: webhook,
      });
      expect(again.action).toBe("authorized");
      const same = await payment.authorizePaymentSession(session.id, {});
      expect(same?.id).toBe(authorized?.id);
      expect(
        sandbox
          .authorizations({ merchantId: merchant.merchantId })
          .filter((a) => a.actionReference === session.id),
      ).toHaveLength(1);

      await payment.capturePayment({ payment_id: authorized!.id });
      expect(sandbox.orders().find((o) => o.orderId === orderId)?.status).toBe("Activated");
    });

    it("an asynchronous auto capture arrives as captured, and Medusa records the capture", async () => {
      const { session } = await openSession(ASYNC_AUTO, 18.5);
      expect(await payment.authorizePaymentSession(session.id, {})).toBeNull();
      await sandbox.settle();
      const delivery = receiver.ofType("authorization.succeeded").find((d) => d.rawBody.includes(session.id));
      const result = await payment.getWebhookActionAndData({
        provider: "purchase-auth_async-auto",
        payload: { data: {}, rawData: delivery!.rawBody, headers: delivery!.headers },
      });
      expect(result).toEqual({ action: "captured", data: { session_id: session.id, amount: "18.50" } });
      // What Medusa's payment workflow does for "captured" without a payment: authorize the session.
      const captured = await paymentWithCaptures((await authorize(session.id)).id);
      expect(captured.captured_at).toBeTruthy();
      expect(captured.captures).toHaveLength(1);
      expect(captured.data).toMatchObject({ state: "captured", captured_amount: "18.50" });
      expect(sandbox.orders().find((o) => o.orderId === captured.data?.order_id)?.status).toBe("Activated");
    });

    it("a failed asynchronous authorization is reported as failed, with the reason logged", async () => {
      const token = newToken({ funds: "5.00" });
      const { session } = await openSession(ASYNC, 30, token);
      await payment.authorizePaymentSession(session.id, {});
      await sandbox.settle();
      const delivery = receiver.ofType("authorization.failed").find((d) => d.rawBody.includes(session.id));
      const result = await payment.getWebhookActionAndData({
        provider: "purchase-auth_async",
        payload: { data: {}, rawData: delivery!.rawBody, headers: delivery!.headers },
      });
      expect(result).toEqual({ action: "failed", data: { session_id: session.id, amount: "0" } });
      expect(
        logLines.some((line) => line.includes("PAYMENT_METHOD_NO_FUNDS") && line.includes(session.id)),
      ).toBe(true);
      const [failed] = await payment.listPaymentSessions({ id: session.id });
      expect(failed?.data).toMatchObject({ state: "failed", failure_reason: "PAYMENT_METHOD_NO_FUNDS" });
      await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(
        /PAYMENT_METHOD_NO_FUNDS/,
      );
    });

    it("ignores webhooks that fail verification and events it does not act on", async () => {
      const delivery =
        receiver.received.find((d) => d.type === "authorization.succeeded") ?? receiver.received[0];
      expect(delivery).toBeDefined();
      const tampered = Buffer.from(
        delivery!.rawBody.toString().replace(/"amount":"[^"]*"/, '"amount":"0.01"'),
      );
      const forged = await payment.getWebhookActionAndData({
        provider: "purchase-auth_async",
        payload: { data: {}, rawData: tampered, headers: delivery!.headers },
      });
      expect(forged).toEqual({ action: "not_supported" });
      expect(logLines.some((line) => line.includes("invalid_signature"))).toBe(true);

      const captured = receiver.ofType("order.captured")[0];
      if (captured) {
        const result = await payment.getWebhookActionAndData({
          provider: "purchase-auth_async",
          // After a trip through a serialising event bus, the raw body is { type: "Buffer", data }.
          payload: {
            data: {},
            rawData: JSON.parse(JSON.stringify(captured.rawBody)),
            headers: captured.headers,
          },
        });
        expect(result).toEqual({ action: "not_supported" });
      }
    });

    const declines: Array<[CustomerTokenStatus, string]> = [
      ["Pending", "TOKEN_PENDING"],
      ["PendingActivation", "PENDING_ACTIVATION"],
      ["Denied", "TOKEN_DENIED"],
      ["Revoked", "TOKEN_REVOKED"],
      ["Cancelled", "TOKEN_CANCELLED"],
    ];

    it("declines with the reason for every token state, at initiation and at authorization", async () => {
      for (const [status, reason] of declines) {
        // A token already in that state: the payment session is refused.
        await expect(openSession(MANUAL, 10, newToken({ status }))).rejects.toThrow(new RegExp(reason));
        // A token that changes state after the session was opened: the authorization is declined.
        const { session, token } = await openSession(MANUAL, 10);
        sandbox.setCustomerTokenStatus(token, status);
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(
          new RegExp(`declined \\(${reason}`),
        );
        const [after] = await payment.listPaymentSessions({ id: session.id });
        expect(after?.status).toBe("pending");
      }
      const poor = await openSession(MANUAL, 10, newToken({ funds: "9.99" }));
      await expect(payment.authorizePaymentSession(poor.session.id, {})).rejects.toThrow(
        /PAYMENT_METHOD_NO_FUNDS/,
      );
      // A token in another currency is not picked by default; named explicitly, the service's rule applies.
      const krona = newToken({ currency: "SEK" });
      await expect(openSession(MANUAL, 10, krona)).rejects.toThrow(/no stored customer token for EUR/);
      await expect(openSession(MANUAL, 10, krona, { customer_token: krona })).rejects.toThrow(
        /INVALID_CURRENCY/,
      );
    });

    it("a decline worth retrying is tried again with a new key; a repeat replays the same attempts", async () => {
      const token = sandbox.createCustomerToken({
        merchantId: merchant.merchantId,
        failNextAttempts: ["PAYMENT_FAILED"],
      }).customerToken;
      const { session } = await openSession(MANUAL, 12, token);
      const authorized = await authorize(session.id);
      const attempts = sandbox.authorizations({ merchantId: merchant.merchantId, customerToken: token });
      expect(attempts.map((attempt) => attempt.status)).toEqual(["Failed", "Succeeded"]);
      expect(authorized.data?.order_id).toBe(attempts[1]?.orderId);
      // Medusa calling again for the same session gets the stored outcomes: nothing new is charged.
      const [stored] = await payment.listPaymentSessions({ id: session.id });
      const initiated = { ...stored!.data, state: "initiated", order_id: null, authorization_id: null };
      const replay = await providerOf(payment, MANUAL).authorizePayment({
        data: initiated,
        context: { idempotency_key: session.id },
      });
      expect(replay.data?.order_id).toBe(attempts[1]?.orderId);
      expect(sandbox.authorizations({ merchantId: merchant.merchantId, customerToken: token })).toHaveLength(
        2,
      );
    });

    it("a customer can only charge their own stored tokens; a guest cannot use the provider", async () => {
      const mine = await openSession(MANUAL, 10);
      const otherToken = newToken();
      const collection = await payment.createPaymentCollections({ amount: 10, currency_code: "eur" });
      await expect(
        payment.createPaymentSession(collection.id, {
          provider_id: MANUAL,
          amount: 10,
          currency_code: "eur",
          data: { customer_token: otherToken },
          context: { customer: mine.customer, account_holder: mine.holder },
        }),
      ).rejects.toThrow(/not one of this customer's stored customer tokens/);
      await expect(
        payment.createPaymentSession(collection.id, {
          provider_id: MANUAL,
          amount: 10,
          currency_code: "eur",
          data: { customer_token: mine.token },
        }),
      ).rejects.toThrow(/logged-in customer/);
      expect(sandbox.authorizations({ customerToken: otherToken })).toHaveLength(0);
    });

    it("Medusa retrying an authorization creates no second authorization at the service", async () => {
      const before = sandbox.authorizations({ merchantId: merchant.merchantId }).length;
      const { session } = await openSession(MANUAL, 75);
      // The first answer is lost after the service committed it; core retries with the same key.
      sandbox.injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: "/purchase/authorizations" },
      });
      const authorized = await authorize(session.id);
      expect(sandbox.authorizations({ merchantId: merchant.merchantId })).toHaveLength(before + 1);

      // Medusa calling the provider again for the same session (its context key = the session id).
      const providerService = providerOf(payment, MANUAL);
      const [stored] = await payment.listPaymentSessions({ id: session.id });
      const initiated = { ...stored!.data, state: "initiated", order_id: null, authorization_id: null };
      const replay = await providerService.authorizePayment({
        data: initiated,
        context: { idempotency_key: session.id },
      });
      expect(replay.data?.order_id).toBe(authorized.data?.order_id);
      expect(sandbox.authorizations({ merchantId: merchant.merchantId })).toHaveLength(before + 1);
    });

    /** Every answer of the service to `path` is lost after it committed, until clearFaults. */
    function loseAnswers(path: string) {
      sandbox.injectFault({ kind: "drop_after_commit", match: { method: "POST", path }, count: null });
    }

    it("an unknown authorization outcome is kept on the session and resolved with the same key", async () => {
      const { session, token } = await openSession(FAST, 64);
      loseAnswers("/purchase/authorizations");
      try {
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/not authorized/);
      } finally {
        sandbox.clearFaults();
      }
      const [unknown] = await payment.listPaymentSessions({ id: session.id });
      expect(unknown?.status).toBe("error");
      expect(unknown?.data).toMatchObject({ state: "unknown", authorize_attempt: 1, session_id: session.id });
      const charged = sandbox.authorizations({ merchantId: merchant.merchantId, customerToken: token });
      expect(charged).toHaveLength(1);

      // The next authorization of the session repeats the same attempt: the same single authorization.
      const authorized = await authorize(session.id);
      expect(authorized.data).toMatchObject({ state: "authorized", authorize_attempt: null });
      expect(authorized.data?.order_id).toBe(charged[0]?.orderId);
      expect(sandbox.authorizations({ merchantId: merchant.merchantId, customerToken: token })).toHaveLength(
        1,
      );
    });

    it("deleting a session with an unknown outcome releases what the service did, or refuses", async () => {
      for (const providerId of [FAST, FAST_AUTO]) {
        const { session, token } = await openSession(providerId, 25);
        loseAnswers("/purchase/authorizations");
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/not authorized/);
        // Still unknown: the session is not dropped.
        await expect(payment.deletePaymentSession(session.id)).rejects.toThrow(/cannot be deleted yet/);
        sandbox.clearFaults();
        expect(await payment.listPaymentSessions({ id: session.id })).toHaveLength(1);

        await payment.deletePaymentSession(session.id);
        expect(await payment.listPaymentSessions({ id: session.id })).toHaveLength(0);
        const orders = sandbox
          .orders({ merchantId: merchant.merchantId })
          .filter((o) => o.customerToken === token);
        expect(orders).toHaveLength(1);
        if (providerId === FAST) {
          expect(orders[0]).toMatchObject({ status: "Cancelled", capturedAmount: "0.00" });
        } else {
          expect(orders[0]).toMatchObject({
            status: "Returned",
            capturedAmount: "25.00",
            refundedAmount: "25.00",
          });
        }
      }
    });

    it("a capture or refund retried after an unknown outcome is applied once", async () => {
      const { session } = await openSession(FAST, 100);
      const authorized = await authorize(session.id);
      const orderId = authorized.data?.order_id as string;
      const orderAt = () => sandbox.orders().find((o) => o.orderId === orderId);

      loseAnswers(`/manage/orders/${orderId}/capture`);
      try {
        await expect(payment.capturePayment({ payment_id: authorized.id, amount: 30 })).rejects.toThrow();
      } finally {
        sandbox.clearFaults();
      }
      expect((await paymentWithCaptures(authorized.id)).captures).toHaveLength(0); // Medusa deleted it
      expect(orderAt()?.capturedAmount).toBe("30.00"); // the service did capture
      await payment.capturePayment({ payment_id: authorized.id, amount: 30 });
      expect(orderAt()?.capturedAmount).toBe("30.00");
      await payment.capturePayment({ payment_id: authorized.id, amount: 20 });
      expect(orderAt()?.capturedAmount).toBe("50.00");
      expect((await paymentWithCaptures(authorized.id)).captures).toHaveLength(2);

      loseAnswers(`/manage/orders/${orderId}/refund`);
      try {
        await expect(payment.refundPayment({ payment_id: authorized.id, amount: 10 })).rejects.toThrow();
      } finally {
        sandbox.clearFaults();
      }
      expect(orderAt()?.refundedAmount).toBe("10.00");
      await payment.refundPayment({ payment_id: authorized.id, amount: 10 });
      expect(orderAt()?.refundedAmount).toBe("10.00");
      await payment.refundPayment({ payment_id: authorized.id, amount: 10 });
      expect(orderAt()?.refundedAmount).toBe("20.00");
      const stored = await paymentWithCaptures(authorized.id);
      expect(stored.refunds).toHaveLength(2);
      expect(stored.data).toMatchObject({ captured_amount: "50.00", refunded_amount: "20.00" });
    });

    it("capturing a cancelled order, or its released remainder, is an error", async () => {
      const provider = providerOf(payment, MANUAL);
      const whole = await authorize((await openSession(MANUAL, 40)).session.id);
      await provider.cancelPayment({ data: whole.data!, context: { idempotency_key: "pay_x1" } });
      await expect(payment.capturePayment({ payment_id: whole.id })).rejects.toThrow(/cannot be captured/);
      expect((await paymentWithCaptures(whole.id)).captures).toHaveLength(0);

      const part = await authorize((await openSession(MANUAL, 40)).session.id);
      await payment.capturePayment({ payment_id: part.id, amount: 15 });
      const afterCapture = await paymentWithCaptures(part.id);
      // The remainder is released as the order-canceled subscriber does (cancelPayment refuses a
      // payment with captured money).
      await (provider as unknown as PurchaseAuthProviderService).releaseRemainder(
        afterCapture.data,
        "pay_x2",
      );
      await expect(payment.capturePayment({ payment_id: part.id, amount: 25 })).rejects.toThrow(
        /cannot be captured/,
      );
      expect(sandbox.orders().find((o) => o.orderId === part.data?.order_id)?.capturedAmount).toBe("15.00");
    });

    it("cancelling an order with captured money is an error, not a cancellation", async () => {
      const captured = await authorize((await openSession(AUTO, 12)).session.id);
      await expect(
        providerOf(payment, AUTO).cancelPayment({
          data: captured.data!,
          context: { idempotency_key: "pay_x3" },
        }),
      ).rejects.toThrow(/cannot be canceled, refund it instead/);
    });

    it("a genuine webhook processed an hour after it was signed is still applied", async () => {
      const { session } = await openSession(ASYNC, 33);
      expect(await payment.authorizePaymentSession(session.id, {})).toBeNull();
      await sandbox.settle();
      const delivery = receiver.ofType("authorization.succeeded").find((d) => d.rawBody.includes(session.id));
      const event = JSON.parse(delivery!.rawBody.toString());
      const late = signWebhook(event, WEBHOOK_SECRET, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
      const result = await payment.getWebhookActionAndData({
        provider: "purchase-auth_async",
        payload: { data: {}, rawData: Buffer.from(late.body), headers: late.headers },
      });
      expect(result).toEqual({ action: "authorized", data: { session_id: session.id, amount: "33.00" } });
    });
  },
});

/** The provider instance the payment module registered (for calling it as Medusa would). */
function providerOf(payment: IPaymentModuleService, id: string) {
  const internals = payment as unknown as {
    paymentProviderService_: {
      retrieveProvider(id: string): import("@medusajs/framework/types").IPaymentProvider;
    };
  };
  return internals.paymentProviderService_.retrieveProvider(id);
}
