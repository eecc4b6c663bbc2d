import type { PaymentSessionDTO } from "@medusajs/framework/types";
import { expect, it } from "vitest";
import { deliverWebhook, type SucceededEvent, succeededEventOf } from "./support/lost-answer";
import { moduleSandbox } from "./support/module-suite";
import { storeCustomerToken } from "./support/payment-module";
import { paymentModuleTests } from "./support/payment-module-tests";
import { recordingLogger } from "./support/recording-logger";

// A late success is released as "paid another way" only while another session's payment of the
// collection still holds money in Medusa's records. When a cart's completion fails with Auto
// capture, Medusa's compensation (refundPaymentAndRecreatePaymentSessionWorkflow) refunds the
// payment without canceling it; the shopper pays again, and the new payment's own success must not
// be refunded at the service for that refunded payment. A payment still authorized (wholly or in
// part) or captured and not all refunded still counts: that late success is released. A session
// with a live payment of its own is never "paid another way": its success is that payment's.

const DB_NAME = "purchase-auth-medusa-paid-otherwise-holds-money";
const WEBHOOK_SECRET = "whsec-paid-otherwise-money";
const ASYNC = "pp_purchase-auth_async";
const ASYNC_AUTO = "pp_purchase-auth_async-auto";
const SYNC = "pp_purchase-auth_sync";
const SYNC_AUTO = "pp_purchase-auth_sync-auto";
const suite = moduleSandbox(DB_NAME, WEBHOOK_SECRET);
const { logger } = recordingLogger();

paymentModuleTests(
  suite,
  {
    dbName: DB_NAME,
    logger,
    providers: [
      suite.providerConfig("async", { attemptSchedule: "asap", maxRetries: 0 }),
      suite.providerConfig("async-auto", { attemptSchedule: "asap", maxRetries: 0, captureMode: "Auto" }),
      suite.providerConfig("sync", { attemptSchedule: "synchronous", maxRetries: 0 }),
      suite.providerConfig("sync-auto", {
        attemptSchedule: "synchronous",
        maxRetries: 0,
        captureMode: "Auto",
      }),
    ],
  },
  ({ payment }) => {
    let customers = 0;
    const serviceOrder = (id: string) => suite.state.sandbox!.orders().find((order) => order.orderId === id);
    /** The provider's id as Medusa's webhook route names it (without `pp_`). */
    const webhookProvider = (providerId: string) => providerId.replace(/^pp_/, "");

    /** Another customer's payment session on collection `collectionId`. */
    async function sessionIn(collectionId: string, providerId: string, amount: number) {
      customers += 1;
      const customer = { id: `cus_holds_money_${customers}`, email: `holds${customers}@example.com` };
      const holder = await storeCustomerToken(payment, providerId, customer, suite.newToken());
      return await payment.createPaymentSession(collectionId, {
        provider_id: providerId,
        amount,
        currency_code: "eur",
        data: {},
        context: { customer, account_holder: holder },
      });
    }

    /** A collection paid by a first session (synchronously): its payment. */
    async function paidCollection(providerId: string, amount: number) {
      const { session } = await suite.openSession(payment, providerId, amount);
      const paid = await payment.authorizePaymentSession(session.id, {});
      if (!paid) throw new Error(`payment session ${session.id} was not authorized at once`);
      expect(paid).toMatchObject({ payment_session_id: session.id });
      return paid;
    }

    /** A session of the collection accepted (202): its success event, undelivered. */
    async function acceptedIn(collectionId: string, providerId: string, amount: number) {
      const session = await sessionIn(collectionId, providerId, amount);
      expect(await payment.authorizePaymentSession(session.id, {})).toBeNull();
      return { session, succeeded: await succeededEventOf(suite.state.sandbox!, session.id) };
    }

    async function expectReleased(session: PaymentSessionDTO, succeeded: SucceededEvent) {
      const action = await deliverWebhook(
        payment,
        webhookProvider(session.provider_id),
        succeeded,
        WEBHOOK_SECRET,
      );
      expect(action.action).toBe("not_supported");
      expect(serviceOrder(succeeded.data.orderId)?.status).toBe("Cancelled");
      const [after] = await payment.listPaymentSessions({ id: session.id });
      expect(after?.data).toMatchObject({ state: "canceled", order_id: succeeded.data.orderId });
      expect(await payment.listPayments({ payment_session_id: session.id })).toEqual([]);
    }

    it("a success after the collection's Auto payment was refunded in full (not canceled) is not released", async () => {
      // Medusa's compensation of a failed cart completion: the captured payment is refunded, not canceled.
      const refunded = await paidCollection(SYNC_AUTO, 71);
      await payment.refundPayment({ payment_id: refunded.id, amount: 71 });
      const [stillLive] = await payment.listPayments({ id: refunded.id });
      expect(stillLive?.canceled_at).toBeFalsy();
      expect(serviceOrder(refunded.data?.order_id as string)).toMatchObject({
        capturedAmount: "71.00",
        refundedAmount: "71.00",
      });

      // The shopper pays again with another session; its success arrives.
      const { session, succeeded } = await acceptedIn(refunded.payment_collection_id, ASYNC_AUTO, 71);
      const action = await deliverWebhook(payment, webhookProvider(ASYNC_AUTO), succeeded, WEBHOOK_SECRET);
      expect(action.action).toBe("captured");
      expect(serviceOrder(succeeded.data.orderId)).toMatchObject({
        status: "Activated",
        capturedAmount: "71.00",
        refundedAmount: "0.00",
      });
      const [after] = await payment.listPaymentSessions({ id: session.id });
      expect(after?.data).toMatchObject({ state: "captured", order_id: succeeded.data.orderId });
    });

    it("the synchronous success of the payment Medusa recorded after such a refund is not released", async () => {
      const refunded = await paidCollection(SYNC_AUTO, 72);
      await payment.refundPayment({ payment_id: refunded.id, amount: 72 });
      // Paid again, synchronously: Medusa records the payment; the service sends its success too.
      const again = await sessionIn(refunded.payment_collection_id, SYNC_AUTO, 72);
      const paid = await payment.authorizePaymentSession(again.id, {});
      expect(paid).toMatchObject({ payment_session_id: again.id });
      const succeeded = await succeededEventOf(suite.state.sandbox!, again.id);
      const action = await deliverWebhook(payment, webhookProvider(SYNC_AUTO), succeeded, WEBHOOK_SECRET);
      expect(action.action).not.toBe("not_supported");
      expect(serviceOrder(succeeded.data.orderId)).toMatchObject({
        status: "Activated",
        capturedAmount: "72.00",
        refundedAmount: "0.00",
      });
    });

    it("a success after the collection's payment was captured (not refunded) is released", async () => {
      const captured = await paidCollection(SYNC, 73);
      await payment.capturePayment({ payment_id: captured.id });
      const { session, succeeded } = await acceptedIn(captured.payment_collection_id, ASYNC, 73);
      await expectReleased(session, succeeded);
      expect(serviceOrder(captured.data?.order_id as string)).toMatchObject({
        status: "Activated",
        capturedAmount: "73.00",
      });
    });

    it("a success after the collection's payment was authorized (not captured) is released", async () => {
      const authorized = await paidCollection(SYNC, 74);
      const { session, succeeded } = await acceptedIn(authorized.payment_collection_id, ASYNC, 74);
      await expectReleased(session, succeeded);
      expect(serviceOrder(authorized.data?.order_id as string)?.status).toBe("NotActivated");
    });

    it("a success after the collection's payment was partly captured and that part refunded is released", async () => {
      // The uncaptured remainder is still held.
      const part = await paidCollection(SYNC, 75);
      await payment.capturePayment({ payment_id: part.id, amount: 30 });
      await payment.refundPayment({ payment_id: part.id, amount: 30 });
      const { session, succeeded } = await acceptedIn(part.payment_collection_id, ASYNC, 75);
      await expectReleased(session, succeeded);
    });

    it("a success of a session with a live payment of its own is that payment's, even in a collection paid otherwise", async () => {
      const captured = await paidCollection(SYNC, 76);
      await payment.capturePayment({ payment_id: captured.id });
      const own = await sessionIn(captured.payment_collection_id, SYNC, 76);
      expect(await payment.authorizePaymentSession(own.id, {})).toMatchObject({ payment_session_id: own.id });
      const succeeded = await succeededEventOf(suite.state.sandbox!, own.id);
      const action = await deliverWebhook(payment, webhookProvider(SYNC), succeeded, WEBHOOK_SECRET);
      expect(action.action).toBe("authorized");
      expect(serviceOrder(succeeded.data.orderId)?.status).toBe("NotActivated");
      const [after] = await payment.listPaymentSessions({ id: own.id });
      expect(after?.data).toMatchObject({ state: "authorized", order_id: succeeded.data.orderId });
    });
  },
);
