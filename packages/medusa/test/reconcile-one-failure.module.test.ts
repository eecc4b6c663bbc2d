import { expect, it } from "vitest";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { authorizeWithLostAnswer, withStatementHook } from "./support/lost-answer";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// One session's failing statement must not abort the reconcile run: the others are still settled.

syncProviderTests(
  "reconcile-one-failure",
  ({ payment, medusaApp, suite, logger, logLines, providerId: SYNC }) => {
    it("a statement failing for one session is logged at ERROR and the run settles the others", async () => {
      await orderLinkTable(medusaApp);
      const sandbox = suite.state.sandbox!;
      const { session: failing } = await suite.openSession(payment, SYNC, 71);
      const { session: fine } = await suite.openSession(payment, SYNC, 72);
      await authorizeWithLostAnswer(payment, sandbox, failing.id);
      await authorizeWithLostAnswer(payment, sandbox, fine.id);
      const container = withStatementHook(jobContainer(payment, medusaApp, logger), async (sql, bindings) => {
        if (sql.includes("order_payment_collection") && bindings.includes(failing.payment_collection_id)) {
          throw new Error("canceling statement due to statement timeout");
        }
      });
      const report = await reconcileUnknownOutcomes(container);
      expect(report.resolved).toEqual([fine.id]);
      expect(report.stillUnknown).toEqual([failing.id]);
      expect(
        logLines.some(
          (line) =>
            line.level === "error" &&
            line.message.includes(failing.id) &&
            line.message.includes("statement timeout"),
        ),
      ).toBe(true);
      expect((await payment.listPaymentSessions({ id: failing.id }))[0]?.data).toMatchObject({
        state: "unknown",
      });
    });
  },
);
