import { expect, it } from "vitest";
import { claimResend, JOB_CLAIM } from "../src/providers/purchase-auth/session-sql";
import { authorizeWithLostAnswer, onFirstSessionRead } from "./support/lost-answer";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// The storefront re-initiates payment after an unknown outcome: Medusa deletes the unknown session,
// and deletePayment resends its key, finds the service's order and releases it. When that cancel is
// committed at the service but its answer is lost, the deletion is refused and the session stays.
// The late authorization.succeeded must not authorize it (Medusa would record a payment for an order
// the service cancelled): deletePayment marks it releasing first, as the reconcile job does, and
// the job's next run finishes the release. Nor may a delete release an order while a checkout holds
// a live resend claim (it is about to return authorized): the delete is refused, nothing released.

syncProviderTests(
  "delete-release-lost-answer",
  ({
    payment,
    medusaApp,
    suite,
    providerId: SYNC,
    sandbox,
    serviceOrder,
    sessionData,
    runJob,
    pg,
    provider,
    processWebhook,
    expectNoPayment,
  }) => {
    it("deleting an unknown session whose cancel answer is lost: the late success authorizes nothing, the next run records it canceled", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 71);
      const succeeded = await authorizeWithLostAnswer(payment, sandbox(), session.id);
      const orderId = succeeded.data.orderId;
      sandbox().injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: `/manage/orders/${orderId}/cancel` },
        count: null,
      });
      try {
        await expect(payment.deletePaymentSession(session.id)).rejects.toThrow();
        // Committed at the service, unknown to Medusa, which keeps the session.
        expect(serviceOrder(orderId)?.status).toBe("Cancelled");
        // The service cannot be read either while the webhook arrives: it cannot finish the release.
        sandbox().injectFault({
          kind: "unavailable",
          match: { method: "GET", path: `/manage/orders/${orderId}` },
          count: null,
        });
        const late = await processWebhook(session.id, succeeded);
        await expectNoPayment(session.id);
        expect(late.action).toBe("not_supported");
        // Left releasing for the job: the order it sent the release for, with the release's keys.
        expect(await sessionData(session.id)).toMatchObject({
          state: "unknown",
          order_id: orderId,
          release_key_base: session.id,
        });
        expect((await sessionData(session.id))?.release_started_at).toEqual(expect.any(String));
      } finally {
        sandbox().clearFaults();
      }

      expect((await runJob()).resolved).toContain(session.id);
      expect(await sessionData(session.id)).toMatchObject({
        state: "canceled",
        order_id: orderId,
        service_status: "Cancelled",
        resend_claimed_at: null,
      });
      expect(serviceOrder(orderId)).toMatchObject({
        status: "Cancelled",
        capturedAmount: "0.00",
        cancelledAmount: "71.00",
      });
      await expectNoPayment(session.id);
      // Medusa deleting it now sends nothing new and succeeds.
      await payment.deletePaymentSession(session.id);
      expect(await payment.listPaymentSessions({ id: session.id })).toEqual([]);
    });

    it("deleting an unknown session that the reconcile job claims meanwhile releases nothing and refuses", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 72);
      const { orderId } = (await authorizeWithLostAnswer(payment, sandbox(), session.id)).data;
      // The job claims the session right after Medusa read it for the deletion.
      const { meanwhile: claimed } = await onFirstSessionRead(
        payment,
        session.id,
        async () => !!(await claimResend(pg(), session.id, 1, JOB_CLAIM)),
        () =>
          expect(payment.deletePaymentSession(session.id)).rejects.toThrow(
            /changed while it was being deleted/,
          ),
      );
      expect(claimed).toBe(true);
      // Nothing was released: the job, holding the claim, settles it.
      expect(serviceOrder(orderId)?.status).toBe("NotActivated");
      expect(await sessionData(session.id)).toMatchObject({
        state: "unknown",
        order_id: null,
        release_started_at: null,
        resend_claimed_by: JOB_CLAIM,
      });
    });

    it("deleting an unknown session between a checkout's confirmed claim and Medusa's write is refused: nothing is released", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 84);
      const { orderId } = (await authorizeWithLostAnswer(payment, sandbox(), session.id)).data;
      const prov = provider();
      const original = prov.authorizePayment;
      let deleteOutcome: unknown = "not run";
      prov.authorizePayment = async function (this: typeof prov, ...args: Parameters<typeof original>) {
        const result = await original.apply(this, args);
        if (deleteOutcome === "not run") {
          // The storefront re-initiates payment in another tab: Medusa's deletePaymentSession reads
          // the session now (the checkout's claim confirmed and renewed, its result not yet written).
          const [read] = await payment.listPaymentSessions({ id: session.id });
          deleteOutcome = await prov.deletePayment({ data: read!.data }).then(
            () => "released",
            (error: Error) => `refused: ${error.message}`,
          );
        }
        return result;
      };
      let authorized: unknown;
      try {
        authorized = await payment.authorizePaymentSession(session.id, {}).catch((e: Error) => e);
      } finally {
        prov.authorizePayment = original;
      }
      const payments = await payment.listPayments({ payment_session_id: session.id });
      expect({
        deleteOutcome,
        paymentRecorded: payments.length > 0 && !(authorized instanceof Error),
        serviceOrder: serviceOrder(orderId)?.status,
      }).toEqual({
        deleteOutcome: expect.stringMatching(/^refused: .*nothing was released/),
        paymentRecorded: true,
        serviceOrder: "NotActivated",
      });
    });
  },
);
