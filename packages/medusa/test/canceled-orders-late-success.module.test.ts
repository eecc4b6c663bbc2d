import { expect, it } from "vitest";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { asyncProviderTests } from "./support/async-provider-tests";
import { cancelMedusaOrder, orderCanceledSubscriber } from "./support/canceled-order";
import { deliverWebhook, succeededEventOf } from "./support/lost-answer";
import { jobContainer } from "./support/reconcile-job";

// A success merged into a pending (202) session just before the order-canceled subscriber reads it
// (so the session is not marked: it reads authorized), with Medusa recording its payment just after
// the subscriber listed the payments (none yet). Nothing marked the payment, its collection's status
// was rewritten by the authorization: the job, which looked for marks or canceled collections, never
// released it. It now finds it by its canceled order.

asyncProviderTests(
  "canceled-orders-late-success",
  ({ payment, medusaApp, suite, logger, providerId: ASYNC, webhookSecret: WEBHOOK_SECRET }) => {
    it("a success recorded after the subscriber looked is released by the job", async () => {
      const sandbox = suite.state.sandbox!;
      const container = jobContainer(payment, medusaApp, logger);
      const { session } = await suite.openSession(payment, ASYNC, 61);
      expect(await payment.authorizePaymentSession(session.id, {})).toBeNull();
      const succeeded = await succeededEventOf(sandbox, session.id);
      // The webhook's handler merged the success; processPaymentWorkflow has not recorded the payment.
      const action = await deliverWebhook(payment, "purchase-auth_async", succeeded, WEBHOOK_SECRET);
      expect(action.action).toBe("authorized");
      await cancelMedusaOrder(payment, medusaApp, session.payment_collection_id);
      await orderCanceledSubscriber(payment, container, session.payment_collection_id);
      // processPaymentWorkflow records the payment now.
      const paid = await payment.authorizePaymentSession(session.id, {});
      expect(paid?.canceled_at ?? null).toBeNull();
      expect(sandbox.orders().find((o) => o.orderId === succeeded.data.orderId)?.status).toBe("NotActivated");
      await reconcileUnknownOutcomes(container);
      const [after] = await payment.listPayments({ payment_session_id: session.id });
      expect(after?.canceled_at).toBeTruthy();
      expect(sandbox.orders().find((o) => o.orderId === succeeded.data.orderId)?.status).toBe("Cancelled");
    });
  },
);
