import { expect, it } from "vitest";
import { asyncProviderTests } from "./support/async-provider-tests";
import { runOrderCanceledSubscriber } from "./support/canceled-order";
import { deliverWebhook, succeededEventOf } from "./support/lost-answer";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";

// A session's stored state only moves forward. The order-canceled subscriber marks a pending (202)
// session so its late success is voided; it used to write the whole data it had read, so a success
// merged (and authorized by Medusa) between its read and its write was overwritten: the session went
// back from authorized to pending_authorization, and the payment Medusa had just recorded for the
// canceled order kept the service's authorization held.

asyncProviderTests(
  "order-canceled-during-success",
  ({ payment, medusaApp, suite, logger, providerId: ASYNC, webhookSecret: WEBHOOK_SECRET }) => {
    it("a success authorized while the subscriber marks the session is not undone, and its payment is released", async () => {
      await orderLinkTable(medusaApp);
      const sandbox = suite.state.sandbox!;
      const { session } = await suite.openSession(payment, ASYNC, 61);
      expect(await payment.authorizePaymentSession(session.id, {})).toBeNull();
      const succeeded = await succeededEventOf(sandbox, session.id);
      const medusaOrderId = `order_${session.payment_collection_id}`;
      // Medusa's query answers the subscriber with the order as it was (session pending, no
      // payment); the webhook is processed in full before the subscriber writes anything.
      const query = {
        graph: async () => {
          const read = {
            data: [
              {
                id: medusaOrderId,
                payment_collections: [
                  {
                    payments: await payment.listPayments({ payment_session_id: session.id }),
                    payment_sessions: await payment.listPaymentSessions({ id: session.id }),
                  },
                ],
              },
            ],
          };
          const action = await deliverWebhook(payment, "purchase-auth_async", succeeded, WEBHOOK_SECRET);
          expect(action.action).toBe("authorized");
          await payment.authorizePaymentSession(session.id, {});
          return read;
        },
      };
      const base = jobContainer(payment, medusaApp, logger);
      await runOrderCanceledSubscriber(base, medusaOrderId, query);

      const [after] = await payment.listPaymentSessions({ id: session.id });
      expect(after?.data).toMatchObject({ state: "authorized", order_id: succeeded.data.orderId });
      const [paid] = await payment.listPayments({ payment_session_id: session.id });
      expect(paid?.canceled_at).toBeTruthy();
      expect(sandbox.orders().find((order) => order.orderId === succeeded.data.orderId)?.status).toBe(
        "Cancelled",
      );
    });
  },
);
