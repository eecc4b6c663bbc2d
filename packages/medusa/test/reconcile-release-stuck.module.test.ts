import { expect, it } from "vitest";
import { RELEASE_REVIEW_AFTER_MS } from "../src/workflows/resolve-unknown-session";
import { authorizeWithLostAnswer, deliverWebhook } from "./support/lost-answer";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// A session the job left releasing (the release's answer lost) whose release then keeps failing was
// retried every run with WARN lines only, for ever, while the service held the order's money. After
// RELEASE_REVIEW_AFTER_MS it is flagged for review with an ERROR naming the order. Flagged, it is
// still released by the job's later runs (nobody else in Medusa would), which clear the flag.

syncProviderTests(
  "reconcile-release-stuck",
  ({
    payment,
    medusaApp,
    suite,
    logLines,
    providerId: SYNC,
    webhookSecret,
    sandbox,
    serviceOrder,
    sessionData,
    runJob,
  }) => {
    /** A run of the job as if it ran `laterMs` from now (the release's age is counted from its `now`). */
    const runJobLater = (laterMs: number) => runJob(new Date(Date.now() + laterMs));

    it("a release that keeps failing is retried quietly, then flagged for review with an ERROR", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 81);
      const { orderId } = (await authorizeWithLostAnswer(payment, sandbox(), session.id)).data;
      sandbox().injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: `/manage/orders/${orderId}/cancel` },
        count: null,
      });
      try {
        expect((await runJobLater(0)).stillUnknown).toContain(session.id);
      } finally {
        sandbox().clearFaults();
      }
      expect(await sessionData(session.id)).toMatchObject({ state: "unknown", order_id: orderId });
      // From now on the service's order cannot be read: every repeat of the release fails.
      sandbox().injectFault({
        kind: "unavailable",
        match: { method: "GET", path: `/manage/orders/${orderId}` },
        count: null,
      });
      try {
        const early = await runJobLater(RELEASE_REVIEW_AFTER_MS / 2);
        expect({ stillUnknown: early.stillUnknown, flagged: early.flagged }).toEqual({
          stillUnknown: [session.id],
          flagged: [],
        });
        expect((await sessionData(session.id))?.review_reason ?? null).toBeNull();

        const late = await runJobLater(RELEASE_REVIEW_AFTER_MS + 60_000);
        expect({ stillUnknown: late.stillUnknown, flagged: late.flagged }).toEqual({
          stillUnknown: [],
          flagged: [session.id],
        });
      } finally {
        sandbox().clearFaults();
      }
      expect(await sessionData(session.id)).toMatchObject({
        state: "unknown",
        order_id: orderId,
        resend_claimed_by: null,
        review_reason: expect.stringContaining("release"),
      });
      const errors = logLines.filter((line) => line.level === "error" && line.message.includes(session.id));
      expect(errors.some((line) => line.message.includes(orderId))).toBe(true);
    });

    it("a release flagged after a >4h outage is released by the job once the service answers again, and the flag cleared", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 83);
      const { orderId } = (await authorizeWithLostAnswer(payment, sandbox(), session.id)).data;
      // The service's order API is down (nothing committed): every release fails.
      sandbox().injectFault({
        kind: "unavailable",
        match: { method: "GET", path: `/manage/orders/${orderId}` },
        count: null,
      });
      try {
        expect((await runJobLater(0)).stillUnknown).toContain(session.id);
        expect((await sessionData(session.id))?.release_started_at).toEqual(expect.any(String));
        expect((await runJobLater(RELEASE_REVIEW_AFTER_MS + 60_000)).flagged).toContain(session.id);
        // Still failing: read again, repeated, no second ERROR.
        const again = await runJobLater(RELEASE_REVIEW_AFTER_MS + 5 * 60_000);
        expect({ stillUnknown: again.stillUnknown, flagged: again.flagged }).toEqual({
          stillUnknown: [session.id],
          flagged: [],
        });
      } finally {
        sandbox().clearFaults();
      }
      const errors = logLines.filter((line) => line.level === "error" && line.message.includes(session.id));
      expect(errors).toHaveLength(1);
      // The outage is over: the next run releases the order nobody in Medusa holds.
      expect((await runJobLater(RELEASE_REVIEW_AFTER_MS + 10 * 60_000)).resolved).toContain(session.id);
      expect(serviceOrder(orderId)?.status).toBe("Cancelled");
      expect(await payment.listPayments({ payment_session_id: session.id })).toEqual([]);
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled", review_reason: null });
    });

    it("a flagged release finished by the late success's webhook clears the flag", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 87);
      const succeeded = await authorizeWithLostAnswer(payment, sandbox(), session.id);
      const { orderId } = succeeded.data;
      sandbox().injectFault({
        kind: "unavailable",
        match: { method: "GET", path: `/manage/orders/${orderId}` },
        count: null,
      });
      try {
        await runJobLater(0);
        expect((await runJobLater(RELEASE_REVIEW_AFTER_MS + 60_000)).flagged).toContain(session.id);
      } finally {
        sandbox().clearFaults();
      }
      const action = await deliverWebhook(payment, "purchase-auth_sync", succeeded, webhookSecret);
      expect(action.action).toBe("not_supported");
      expect(serviceOrder(orderId)?.status).toBe("Cancelled");
      expect(await sessionData(session.id)).toMatchObject({ state: "canceled", review_reason: null });
    });

    it("a release that begins and fails in a run given a later `now` is not flagged at once", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 86);
      const { orderId } = (await authorizeWithLostAnswer(payment, sandbox(), session.id)).data;
      sandbox().injectFault({
        kind: "unavailable",
        match: { method: "GET", path: `/manage/orders/${orderId}` },
        count: null,
      });
      const later = new Date(Date.now() + RELEASE_REVIEW_AFTER_MS + 60_000);
      try {
        // The release's age is measured against the run's `now`: it must begin at that `now` too.
        const run = await runJob(later);
        expect({ stillUnknown: run.stillUnknown, flagged: run.flagged }).toEqual({
          stillUnknown: [session.id],
          flagged: [],
        });
      } finally {
        sandbox().clearFaults();
      }
      expect(await sessionData(session.id)).toMatchObject({
        release_started_at: later.toISOString(),
        review_reason: null,
      });
    });
  },
);
