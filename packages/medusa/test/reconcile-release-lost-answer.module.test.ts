import { expect, it } from "vitest";
import type { RecordReleaseIntent } from "../src/providers/purchase-auth/authorize-payment";
import { authorizeWithLostAnswer, onFirstSessionRead } from "./support/lost-answer";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// The reconcile job resends an unknown session's key, finds the service's order and releases it (the
// cart never completed). When the release is committed at the service but its answer is lost (or the
// job dies right before sending it), the session must not be authorized by the late
// authorization.succeeded webhook: Medusa would record a payment for an order the service cancelled.
// The job marks the session releasing before it sends, and its next run repeats the release.

syncProviderTests(
  "reconcile-release-lost-answer",
  ({
    payment,
    medusaApp,
    suite,
    logLines,
    providerId: SYNC,
    sandbox,
    serviceOrder,
    sessionData,
    provider,
    runJob,
    processWebhook,
    expectNoPayment,
  }) => {
    /** One job run whose release (the cancel of `orderId`) reaches the service, its answer lost. */
    async function runJobReleaseLost(sessionId: string, orderId: string) {
      sandbox().injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: `/manage/orders/${orderId}/cancel` },
        count: null,
      });
      try {
        expect((await runJob()).stillUnknown).toContain(sessionId);
      } finally {
        sandbox().clearFaults();
      }
    }

    /** A session whose authorization's answer was lost, and the success the service sent for it. */
    async function unknownSession(amount: number) {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, amount);
      const succeeded = await authorizeWithLostAnswer(payment, sandbox(), session.id);
      return { session, succeeded, orderId: succeeded.data.orderId };
    }

    it("a release whose answer is lost: the late success authorizes nothing and the next run records it canceled", async () => {
      const { session, succeeded, orderId } = await unknownSession(51);
      sandbox().injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: `/manage/orders/${orderId}/cancel` },
        count: null,
      });
      try {
        const first = await runJob();
        expect(first.stillUnknown).toContain(session.id);
        // Committed at the service, unknown to Medusa.
        expect(serviceOrder(orderId)?.status).toBe("Cancelled");
        // The service cannot be read either while the webhook arrives: it cannot finish the release.
        sandbox().injectFault({
          kind: "unavailable",
          match: { method: "GET", path: `/manage/orders/${orderId}` },
          count: null,
        });
        expect((await processWebhook(session.id, succeeded)).action).toBe("not_supported");
        await expectNoPayment(session.id);
        // Left releasing for the job: the order it sent the release for, with the release's keys.
        expect(await sessionData(session.id)).toMatchObject({
          state: "unknown",
          order_id: orderId,
          release_key_base: session.id,
          resend_claimed_at: null,
        });
        expect((await sessionData(session.id))?.release_started_at).toEqual(expect.any(String));
        // A checkout retried meanwhile does not authorize it either.
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow();
        await expectNoPayment(session.id);
      } finally {
        sandbox().clearFaults();
      }

      const second = await runJob();
      expect(second.resolved).toContain(session.id);
      expect(await sessionData(session.id)).toMatchObject({
        state: "canceled",
        order_id: orderId,
        service_status: "Cancelled",
        resend_claimed_at: null,
      });
      expect(serviceOrder(orderId)).toMatchObject({
        status: "Cancelled",
        capturedAmount: "0.00",
        cancelledAmount: "51.00",
      });
      // Redelivered once more: still nothing to do.
      expect((await processWebhook(session.id, succeeded)).action).toBe("not_supported");
      await expectNoPayment(session.id);
    });

    it("a release whose answer is lost: the late success repeats it (same key) and records the session canceled", async () => {
      const { session, succeeded, orderId } = await unknownSession(52);
      await runJobReleaseLost(session.id, orderId);
      expect((await processWebhook(session.id, succeeded)).action).toBe("not_supported");
      await expectNoPayment(session.id);
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled", order_id: orderId });
      expect(serviceOrder(orderId)).toMatchObject({ status: "Cancelled", cancelledAmount: "52.00" });
      const after = await runJob();
      expect([...after.resolved, ...after.stillUnknown, ...after.flagged]).not.toContain(session.id);
    });

    it("the job stops after marking the session releasing and before sending: the next run releases it", async () => {
      const { session, succeeded, orderId } = await unknownSession(53);
      const resolveUnknown = provider().resolveUnknown;
      // A crash right after the intent is written: the release is never sent.
      provider().resolveUnknown = async (data, now, recordIntent?: RecordReleaseIntent) =>
        await resolveUnknown.call(provider(), data, now, async (releasing) => {
          expect(await recordIntent?.(releasing)).toBe(true);
          throw new Error("the process stopped before sending the release");
        });
      try {
        expect((await runJob()).stillUnknown).toContain(session.id);
      } finally {
        provider().resolveUnknown = resolveUnknown;
      }
      expect(serviceOrder(orderId)?.status).toBe("NotActivated");
      expect(await sessionData(session.id)).toMatchObject({
        state: "unknown",
        order_id: orderId,
        resend_claimed_at: null,
      });
      await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow();
      await expectNoPayment(session.id);

      expect((await runJob()).resolved).toContain(session.id);
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled", order_id: orderId });
      expect(serviceOrder(orderId)).toMatchObject({ status: "Cancelled", cancelledAmount: "53.00" });
      expect((await processWebhook(session.id, succeeded)).action).toBe("not_supported");
      await expectNoPayment(session.id);
    });

    it("a webhook that read the session before the job marked it releasing does not authorize it", async () => {
      const { session, succeeded, orderId } = await unknownSession(54);
      // The job runs (its release's answer lost) right after the webhook's handler read the session.
      const { result: action, meanwhile: ran } = await onFirstSessionRead(
        payment,
        session.id,
        async () => {
          await runJobReleaseLost(session.id, orderId);
          return true;
        },
        () => processWebhook(session.id, succeeded),
      );
      expect(action.action).toBe("not_supported");
      expect(ran).toBe(true);
      await expectNoPayment(session.id);
      expect(await sessionData(session.id)).toMatchObject({ state: "unknown", order_id: orderId });
      expect((await runJob()).resolved).toContain(session.id);
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled" });
      expect(serviceOrder(orderId)).toMatchObject({ status: "Cancelled", cancelledAmount: "54.00" });
    });
    it("Medusa deleting a releasing session while the job repeats its release is settled: no ERROR, no review flag", async () => {
      const { session, orderId } = await unknownSession(55);
      await runJobReleaseLost(session.id, orderId);
      expect(await sessionData(session.id)).toMatchObject({ state: "unknown", order_id: orderId });
      // While the next run repeats the release (its claim held), the storefront re-initiates payment
      // and Medusa deletes the session (deletePayment repeats the release too, with the same keys).
      const finishRelease = provider().finishRelease;
      provider().finishRelease = async (...args) => {
        const resolution = await finishRelease.apply(provider(), args);
        await payment.deletePaymentSession(session.id);
        return resolution;
      };
      let report: Awaited<ReturnType<typeof runJob>>;
      try {
        report = await runJob();
      } finally {
        provider().finishRelease = finishRelease;
      }
      expect(serviceOrder(orderId)).toMatchObject({ status: "Cancelled", cancelledAmount: "55.00" });
      const errors = logLines.filter((line) => line.level === "error" && line.message.includes(session.id));
      expect({ flagged: report.flagged, errors }).toEqual({ flagged: [], errors: [] });
    });
  },
);
