import { expect, it } from "vitest";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import {
  authorizeWithLostAnswer,
  deliverWebhook,
  onFirstSessionRead,
  withStatementHook,
} from "./support/lost-answer";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// In synchronous mode the service answers 200 with an order id, and sends authorization.succeeded
// too. When that answer is lost, the session is unknown; three parties may then learn the outcome:
// the webhook, the customer's retried checkout (same key, same 200), and the reconcile job, which
// resends the key and RELEASES the order it finds (the cart did not complete). The job must never
// release an order Medusa records as paid. Interleavings are made exact with hooks, never with time.

syncProviderTests(
  "reconcile-release-race",
  ({
    payment,
    medusaApp,
    suite,
    logger,
    logLines,
    providerId: SYNC,
    webhookSecret: WEBHOOK_SECRET,
    sessionData,
    provider,
    serviceOrder,
  }) => {
    /**
     * Runs the job with `during` called from inside its resend, the claim held: before the key is sent
     * again, or after the order it found was released (before the job writes what it learned).
     */
    async function jobWithResendHook(
      during: () => Promise<void>,
      when: "before sending" | "after the release" = "before sending",
    ) {
      const resolveUnknown = provider().resolveUnknown;
      provider().resolveUnknown = async (...args) => {
        if (when === "before sending") await during();
        const resolution = await resolveUnknown.apply(provider(), args);
        if (when === "after the release") await during();
        return resolution;
      };
      try {
        return await reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger));
      } finally {
        provider().resolveUnknown = resolveUnknown;
      }
    }

    it("a session authorized after the job read its page is left alone: its order is not released", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 41);
      const succeeded = await authorizeWithLostAnswer(payment, suite.state.sandbox!, session.id);
      const { orderId } = succeeded.data;
      // The job has read its page (the session unknown); before it looks at the session, the webhook
      // is processed and Medusa's payment workflow authorizes the session: the order is paid.
      let delivered = false;
      const container = withStatementHook(jobContainer(payment, medusaApp, logger), async (sql) => {
        if (delivered || !sql.includes("order_payment_collection")) return;
        delivered = true;
        const action = await deliverWebhook(payment, "purchase-auth_sync", succeeded, WEBHOOK_SECRET);
        expect(action.action).toBe("authorized");
        await payment.authorizePaymentSession(session.id, {});
      });
      const report = await reconcileUnknownOutcomes(container);
      expect(delivered).toBe(true);
      expect(report.resolved).not.toContain(session.id);
      expect(await sessionData(session.id)).toMatchObject({ state: "authorized", order_id: orderId });
      expect(serviceOrder(orderId)?.status).toBe("NotActivated");
      const payments = await payment.listPayments({ payment_session_id: session.id });
      expect(payments.map((entry) => entry.canceled_at)).toEqual([null]);
    });

    it("a checkout retried while the job resends the key is refused: no payment for the order the job releases", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 42);
      const { orderId } = (await authorizeWithLostAnswer(payment, suite.state.sandbox!, session.id)).data;
      const report = await jobWithResendHook(async () => {
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/being settled/);
      });
      expect(report.resolved).toContain(session.id);
      expect(serviceOrder(orderId)?.status).toBe("Cancelled");
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled", resend_claimed_at: null });
      expect(await payment.listPayments({ payment_session_id: session.id })).toEqual([]);
    });

    it("a webhook arriving while the job resends waits for it and is told nothing to do once the order is released", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 43);
      const succeeded = await authorizeWithLostAnswer(payment, suite.state.sandbox!, session.id);
      let webhook: Promise<{ action: string }> | undefined;
      const report = await jobWithResendHook(async () => {
        webhook = deliverWebhook(payment, "purchase-auth_sync", succeeded, WEBHOOK_SECRET);
      });
      expect(report.resolved).toContain(session.id);
      expect((await webhook)?.action).toBe("not_supported");
      expect(serviceOrder(succeeded.data.orderId)?.status).toBe("Cancelled");
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled" });
    });

    it("the job releasing the order between the webhook's read and its write: the webhook does not authorize", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 44);
      const succeeded = await authorizeWithLostAnswer(payment, suite.state.sandbox!, session.id);
      // The job runs right after the webhook's handler first read the session (unknown).
      const { result: action, meanwhile: report } = await onFirstSessionRead(
        payment,
        session.id,
        () => reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger)),
        () => deliverWebhook(payment, "purchase-auth_sync", succeeded, WEBHOOK_SECRET),
      );
      expect(report?.resolved).toContain(session.id);
      expect(serviceOrder(succeeded.data.orderId)?.status).toBe("Cancelled");
      expect(action.action).toBe("not_supported");
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled" });
      await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/canceled/);
      expect(await payment.listPayments({ payment_session_id: session.id })).toEqual([]);
    });

    it("an order released but not recorded (the session changed despite the claim) is an ERROR and a flag", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 45);
      await authorizeWithLostAnswer(payment, suite.state.sandbox!, session.id);
      const pg = jobContainer(payment, medusaApp, logger).resolve("__pg_connection__") as {
        raw(sql: string, bindings: unknown[]): Promise<unknown>;
      };
      const report = await jobWithResendHook(async () => {
        // A writer that ignores the claim (one that held it past its time limit, say).
        await pg.raw(
          `update payment_session set data = data || '{"failure_reason":"someone else"}'::jsonb where id = ?`,
          [session.id],
        );
      }, "after the release");
      expect(report.flagged).toContain(session.id);
      expect((await sessionData(session.id))?.review_reason).toMatch(/released the service's order/);
      expect(
        logLines.some(
          (line) => line.level === "error" && line.message.includes(`${session.id} changed while`),
        ),
      ).toBe(true);
    });

    it("a session changed despite the claim before the release is recorded: nothing is released, the job leaves it", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 46);
      const { orderId } = (await authorizeWithLostAnswer(payment, suite.state.sandbox!, session.id)).data;
      const pg = jobContainer(payment, medusaApp, logger).resolve("__pg_connection__") as {
        raw(sql: string, bindings: unknown[]): Promise<unknown>;
      };
      const report = await jobWithResendHook(async () => {
        await pg.raw(
          `update payment_session set data = data || '{"failure_reason":"someone else"}'::jsonb where id = ?`,
          [session.id],
        );
      });
      expect(report.stillUnknown).toContain(session.id);
      expect(serviceOrder(orderId)?.status).toBe("NotActivated");
      expect(await sessionData(session.id)).toMatchObject({ state: "unknown", review_reason: null });
      expect(
        logLines.some(
          (line) => line.level === "warn" && line.message.includes(`before it could record the release`),
        ),
      ).toBe(true);
    });
  },
);
