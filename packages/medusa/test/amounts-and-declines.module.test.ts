import { expect, it } from "vitest";
import { moduleSandbox } from "./support/module-suite";
import { paymentModuleTests } from "./support/payment-module-tests";

// Regression tests for two defects found by a merchant trial (issue 13), on the payment module with
// the provider, real PostgreSQL and the sandbox over HTTP.

const DB_NAME = "purchase-auth-medusa-amounts";
const MANUAL = "pp_purchase-auth_manual";
const suite = moduleSandbox(DB_NAME, "whsec-amounts");

paymentModuleTests(
  suite,
  { dbName: DB_NAME, providers: [suite.providerConfig("manual", {})] },
  ({ payment }) => {
    const orderOf = (orderId: unknown) => suite.state.sandbox!.orders().find((o) => o.orderId === orderId);
    async function authorize(sessionId: string) {
      const authorized = await payment.authorizePaymentSession(sessionId, {});
      if (!authorized) throw new Error(`payment session ${sessionId} was not authorized`);
      return authorized;
    }

    it("partial captures of a sub-cent total add up to exactly the total, never a cent above", async () => {
      // A discounted total Medusa keeps with more decimals than the service's cents.
      const { session } = await suite.openSession(payment, MANUAL, "33.333");
      const authorized = await authorize(session.id);
      expect(orderOf(authorized.data?.order_id)).toMatchObject({ totalAmount: "33.33" });
      // Each half rounds up on its own (16.67 + 16.67 = 33.34): the old code aimed the second one
      // at 33.34 and the service refused it.
      await payment.capturePayment({ payment_id: authorized.id, amount: "16.6665" });
      expect(orderOf(authorized.data?.order_id)?.capturedAmount).toBe("16.67");
      await payment.capturePayment({ payment_id: authorized.id, amount: "16.6665" });
      const order = orderOf(authorized.data?.order_id);
      expect(order).toMatchObject({ status: "Activated", capturedAmount: "33.33" });
      const stored = await payment.retrievePayment(authorized.id, { relations: ["captures"] });
      expect(stored.captures).toHaveLength(2);
      // Medusa's payment and the service's order, to the cent.
      expect(stored.data).toMatchObject({ captured_amount: "33.33", service_status: "Activated" });
    });

    it("after a definite decline, the next attempt (cause fixed) is a new attempt with a new key", async () => {
      const { session, token } = await suite.openSession(payment, MANUAL, 21);
      suite.state.sandbox!.setCustomerTokenStatus(token, "Pending");
      await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/TOKEN_PENDING/);
      const [declined] = await payment.listPaymentSessions({ id: session.id });
      expect(declined?.data).toMatchObject({ authorize_attempt: 2, failure_reason: "TOKEN_PENDING" });

      // The buyer's organisation approves the token; the customer completes the cart again. The old
      // code sent the first key again and the service replayed its stored decline for an hour.
      suite.state.sandbox!.setCustomerTokenStatus(token, "Active");
      const authorized = await authorize(session.id);
      expect(authorized.data).toMatchObject({ state: "authorized", failure_reason: null });
      const order = orderOf(authorized.data?.order_id);
      expect(order).toMatchObject({ status: "NotActivated", totalAmount: "21.00", capturedAmount: "0.00" });
      expect(suite.state.sandbox!.authorizations({ customerToken: token })).toHaveLength(1);
    });
  },
);
