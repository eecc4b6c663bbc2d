import { expect, it } from "vitest";
import { PaymentModuleRecords } from "../src/providers/purchase-auth/payment-module-records";
import { asyncProviderTests } from "./support/async-provider-tests";
import { deliverWebhook, succeededEventOf } from "./support/lost-answer";
import { providerOf } from "./support/module-suite";

// Medusa writes the data authorizePayment returns over the session's. A webhook's success merged
// while the service call was in flight (the service answered 202, then succeeded and delivered its
// webhook before the answer got back) must survive that write: the provider reads the stored data
// again before returning, and a stored success wins over its own 202 result.

asyncProviderTests(
  "success-during-authorize",
  ({ payment, suite, providerId: ASYNC, webhookSecret: WEBHOOK_SECRET }) => {
    it("a success merged by the webhook while the checkout's 202 was on its way back is not overwritten", async () => {
      const sandbox = suite.state.sandbox!;
      const { session } = await suite.openSession(payment, ASYNC, 91);
      let orderId: string | undefined;
      let armed = true;
      // The webhook lands once the service has answered and before Medusa writes the result: at the
      // provider's first look at the stored data after the call, or (a provider that does not look)
      // as soon as the call returns.
      const deliverSuccess = async () => {
        armed = false;
        const succeeded = await succeededEventOf(sandbox, session.id);
        orderId = (succeeded!.data as { orderId: string }).orderId;
        const action = await deliverWebhook(payment, "purchase-auth_async", succeeded!, WEBHOOK_SECRET);
        expect(action.action).toBe("authorized");
      };
      const realRead = PaymentModuleRecords.prototype.sessionData;
      PaymentModuleRecords.prototype.sessionData = async function (this: PaymentModuleRecords, id: string) {
        if (armed && id === session.id) await deliverSuccess();
        return await realRead.call(this, id);
      };
      const provider = providerOf(payment, ASYNC);
      const realAuthorize = provider.authorizePayment;
      provider.authorizePayment = async (input) => {
        const out = await realAuthorize.call(provider, input);
        if (armed) await deliverSuccess();
        return out;
      };
      let result: unknown;
      try {
        result = await payment.authorizePaymentSession(session.id, {});
      } finally {
        PaymentModuleRecords.prototype.sessionData = realRead;
        provider.authorizePayment = realAuthorize;
      }
      expect(orderId).toBeDefined();
      expect(result).toMatchObject({ payment_session_id: session.id });
      const [after] = await payment.listPaymentSessions({ id: session.id });
      expect(after?.status).toBe("authorized");
      expect(after?.data).toMatchObject({ state: "authorized", order_id: orderId });
      const payments = await payment.listPayments({ payment_session_id: session.id });
      expect(payments).toHaveLength(1);
      expect(payments[0]?.data).toMatchObject({ order_id: orderId });
    });
  },
);
