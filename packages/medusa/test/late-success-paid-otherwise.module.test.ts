import { expect, it } from "vitest";
import { deliverWebhook, succeededEventOf } from "./support/lost-answer";
import { moduleSandbox } from "./support/module-suite";
import { storeCustomerToken } from "./support/payment-module";
import { paymentModuleTests } from "./support/payment-module-tests";
import { recordingLogger } from "./support/recording-logger";

// An accepted (202) authorization whose webhooks were lost is flagged for review; the operator may
// take another payment for the same payment collection. A success that still arrives afterwards must
// not become a second payment: its order is released at the service and Medusa is told nothing.

const DB_NAME = "purchase-auth-medusa-late-success-paid-otherwise";
const WEBHOOK_SECRET = "whsec-late-success";
const ASYNC = "pp_purchase-auth_async";
const SYNC = "pp_purchase-auth_sync";
const suite = moduleSandbox(DB_NAME, WEBHOOK_SECRET);
const { logger } = recordingLogger();

paymentModuleTests(
  suite,
  {
    dbName: DB_NAME,
    logger,
    providers: [
      suite.providerConfig("async", { attemptSchedule: "asap", maxRetries: 0 }),
      suite.providerConfig("sync", { attemptSchedule: "synchronous", maxRetries: 0 }),
    ],
  },
  ({ payment }) => {
    it("a late success for a collection paid by another session releases its order instead of paying twice", async () => {
      const sandbox = suite.state.sandbox!;
      const { session: late } = await suite.openSession(payment, ASYNC, 61);
      expect(await payment.authorizePaymentSession(late.id, {})).toBeNull();
      const succeeded = await succeededEventOf(sandbox, late.id);
      const orderId = (succeeded!.data as { orderId: string }).orderId;

      // Its webhook is lost; the collection is paid by another session.
      const customer = { id: "cus_paid_otherwise", email: "other@example.com" };
      const holder = await storeCustomerToken(payment, SYNC, customer, suite.newToken());
      const other = await payment.createPaymentSession(late.payment_collection_id, {
        provider_id: SYNC,
        amount: 61,
        currency_code: "eur",
        data: {},
        context: { customer, account_holder: holder },
      });
      expect(await payment.authorizePaymentSession(other.id, {})).toMatchObject({
        payment_session_id: other.id,
      });

      // A redelivery of the lost success arrives.
      const action = await deliverWebhook(payment, "purchase-auth_async", succeeded!, WEBHOOK_SECRET);
      expect(action.action).toBe("not_supported");
      expect(sandbox.orders().find((order) => order.orderId === orderId)?.status).toBe("Cancelled");
      const [after] = await payment.listPaymentSessions({ id: late.id });
      expect(after?.data).toMatchObject({ state: "canceled", order_id: orderId });
      await expect(payment.authorizePaymentSession(late.id, {})).rejects.toThrow(/canceled/);
      expect(await payment.listPayments({ payment_session_id: late.id })).toEqual([]);
    });
  },
);
