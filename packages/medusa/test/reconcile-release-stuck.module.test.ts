import { expect, it } from "vitest";
import { RELEASE_REVIEW_AFTER_MS } from "../src/workflows/resolve-unknown-session";
import { authorizeWithLostAnswer } from "./support/lost-answer";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// A session the job left releasing (the release's answer lost) whose release then keeps failing was
// retried every run with WARN lines only, for ever, while the service held the order's money. After
// RELEASE_REVIEW_AFTER_MS it is flagged for review with an ERROR naming the order, like any other
// session a person must settle.

syncProviderTests(
  "reconcile-release-stuck",
  ({ payment, medusaApp, suite, logLines, providerId: SYNC, sandbox, sessionData, runJob }) => {
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
      // Left to a person: later runs do not read it.
      const after = await runJobLater(RELEASE_REVIEW_AFTER_MS * 2);
      expect([...after.resolved, ...after.stillUnknown, ...after.flagged]).not.toContain(session.id);
    });
  },
);
