import { expect, it } from "vitest";
import { deliverWebhook, type SucceededEvent, succeededEventOf } from "./support/lost-answer";
import { moduleSandbox } from "./support/module-suite";
import { storeCustomerToken } from "./support/payment-module";
import { paymentModuleTests } from "./support/payment-module-tests";
import { recordingLogger } from "./support/recording-logger";

// Medusa deletes a payment session it replaces (the shopper initiates payment again), a pending
// (202) one included: deletePayment has nothing to release yet. When that authorization succeeds
// later, no session holds its order: it is released at the service (WARN), never left held while
// the new session pays. A success naming a gone session whose authorization a live session holds
// releases nothing.

const DB_NAME = "purchase-auth-medusa-late-success-deleted";
const WEBHOOK_SECRET = "whsec-late-deleted";
const ASYNC = "pp_purchase-auth_async";
const ASYNC_AUTO = "pp_purchase-auth_async-auto";
const SYNC = "pp_purchase-auth_sync";
const suite = moduleSandbox(DB_NAME, WEBHOOK_SECRET);
const { logger, lines } = recordingLogger();

paymentModuleTests(
  suite,
  {
    dbName: DB_NAME,
    logger,
    providers: [
      suite.providerConfig("async", { attemptSchedule: "asap", maxRetries: 0 }),
      suite.providerConfig("async-auto", { attemptSchedule: "asap", maxRetries: 0, captureMode: "Auto" }),
      suite.providerConfig("sync", { attemptSchedule: "synchronous", maxRetries: 0 }),
    ],
  },
  ({ payment }) => {
    const serviceOrder = (id: string) => suite.state.sandbox!.orders().find((order) => order.orderId === id);

    async function acceptedWithSuccess(amount: number, provider = ASYNC) {
      const sandbox = suite.state.sandbox!;
      const { session } = await suite.openSession(payment, provider, amount);
      expect(await payment.authorizePaymentSession(session.id, {})).toBeNull();
      return { session, succeeded: await succeededEventOf(sandbox, session.id) };
    }

    it("a success for a pending (202) session Medusa deleted releases the service's order, logged at WARN", async () => {
      const { session: replaced, succeeded } = await acceptedWithSuccess(81);
      // The shopper re-initiates payment: Medusa deletes the pending session (the provider lets it).
      await payment.deletePaymentSession(replaced.id);
      expect(await payment.listPaymentSessions({ id: replaced.id })).toEqual([]);
      // The new session pays.
      const customer = { id: "cus_late_deleted", email: "deleted@example.com" };
      const holder = await storeCustomerToken(payment, SYNC, customer, suite.newToken());
      const other = await payment.createPaymentSession(replaced.payment_collection_id, {
        provider_id: SYNC,
        amount: 81,
        currency_code: "eur",
        data: {},
        context: { customer, account_holder: holder },
      });
      expect(await payment.authorizePaymentSession(other.id, {})).toMatchObject({
        payment_session_id: other.id,
      });

      const action = await deliverWebhook(payment, "purchase-auth_async", succeeded, WEBHOOK_SECRET);
      expect(action.action).toBe("not_supported");
      expect(serviceOrder(succeeded.data.orderId)?.status).toBe("Cancelled");
      expect(
        lines.some(
          (line) =>
            line.level === "warn" &&
            line.message.includes(succeeded.data.orderId) &&
            line.message.includes("released"),
        ),
      ).toBe(true);
      // A redelivery sends nothing twice and changes nothing.
      expect((await deliverWebhook(payment, "purchase-auth_async", succeeded, WEBHOOK_SECRET)).action).toBe(
        "not_supported",
      );
      expect(serviceOrder(succeeded.data.orderId)?.status).toBe("Cancelled");
      expect(await payment.listPayments({ payment_session_id: replaced.id })).toEqual([]);
    });

    it("a success naming a gone session releases nothing while a live session holds its authorization", async () => {
      const { session: live, succeeded } = await acceptedWithSuccess(82);
      const stray: SucceededEvent = {
        ...succeeded,
        id: `${succeeded.id}-stray`,
        data: { ...succeeded.data, actionReference: "payses_never_existed" },
      } as SucceededEvent;
      expect((await deliverWebhook(payment, "purchase-auth_async", stray, WEBHOOK_SECRET)).action).toBe(
        "not_supported",
      );
      expect(serviceOrder(succeeded.data.orderId)?.status).toBe("NotActivated");
      // The live session's own success still authorizes it.
      expect((await deliverWebhook(payment, "purchase-auth_async", succeeded, WEBHOOK_SECRET)).action).toBe(
        "authorized",
      );
      const [after] = await payment.listPaymentSessions({ id: live.id });
      expect(after?.data).toMatchObject({ state: "authorized", order_id: succeeded.data.orderId });
    });

    it("a success captured by the service (Auto) for a deleted session is refunded in full", async () => {
      const { session: replaced, succeeded } = await acceptedWithSuccess(83, ASYNC_AUTO);
      expect((succeeded.data as { captureMode?: string }).captureMode).toBe("Auto");
      await payment.deletePaymentSession(replaced.id);
      const action = await deliverWebhook(payment, "purchase-auth_async-auto", succeeded, WEBHOOK_SECRET);
      expect(action.action).toBe("not_supported");
      expect(serviceOrder(succeeded.data.orderId)).toMatchObject({
        capturedAmount: "83.00",
        refundedAmount: "83.00",
      });
    });
  },
);
