import { expect, it } from "vitest";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { moduleSandbox } from "./support/module-suite";
import { paymentModuleTests } from "./support/payment-module-tests";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";
import { recordingLogger } from "./support/recording-logger";

// The reconcile job must reach every unknown session it may still resolve, however many sessions
// wait for a person (flagged for review, left `unknown` for ever) and however many are unknown. On
// the payment module with the provider, real PostgreSQL and the sandbox over HTTP; an unknown
// outcome is made as in production: the service commits the authorization and its answer is lost.

const DB_NAME = "purchase-auth-medusa-reconcile-reach";
const HOUR = 3_600_000;
/** No retries in the client: a lost answer leaves the session unknown at once. */
const FAST = "pp_purchase-auth_fast";
/** As many sessions flagged for review as the job reads in one query (its default page, 100). */
const FLAGGED = 100;
const suite = moduleSandbox(DB_NAME, "whsec-reconcile-reach");

const { logger } = recordingLogger();

paymentModuleTests(
  suite,
  { dbName: DB_NAME, logger, providers: [suite.providerConfig("fast", { maxRetries: 0 })] },
  ({ payment, medusaApp }) => {
    const job = () => jobContainer(payment, medusaApp, logger);

    /** `count` sessions whose authorization the service committed but whose answer was lost. */
    async function unknownSessions(count: number) {
      const sandbox = suite.state.sandbox!;
      sandbox.injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: "/purchase/authorizations" },
        count: null,
      });
      const made: Array<{ id: string; token: string }> = [];
      try {
        // Ten checkouts at a time, as concurrent customers would.
        for (let from = 0; from < count; from += 10) {
          const batch = Array.from({ length: Math.min(10, count - from) }, async () => {
            const { session, token } = await suite.openSession(payment, FAST, 20);
            await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/not authorized/);
            return { id: session.id, token };
          });
          made.push(...(await Promise.all(batch)));
        }
      } finally {
        sandbox.clearFaults();
      }
      const stored = await payment.listPaymentSessions({ id: made.map((s) => s.id) });
      expect(stored.map((s) => s.data?.state)).toEqual(made.map(() => "unknown"));
      return made;
    }

    /**
     * The key of each session as if first sent two hours ago (the service's idempotency hour is
     * over): the job flags them for review instead of sending their keys again. The age is judged
     * on the real clock, so it is the recorded send time that is moved back.
     */
    async function sentTwoHoursAgo(ids: string[]) {
      const twoHoursAgo = new Date(Date.now() - 2 * HOUR).toISOString();
      for (const session of await payment.listPaymentSessions({ id: ids })) {
        await payment.updatePaymentSession({
          id: session.id,
          amount: session.amount,
          currency_code: session.currency_code,
          data: { ...session.data, authorize_first_sent_at: twoHoursAgo },
        });
      }
    }

    const orderOf = (token: string) =>
      suite.state.sandbox!.orders().filter((order) => order.customerToken === token);

    it("a page and more of flagged unknown sessions never hide a newer one whose key can still be sent", async () => {
      await orderLinkTable(medusaApp);
      const flagged = await unknownSessions(FLAGGED);
      expect(flagged).toHaveLength(FLAGGED);
      await sentTwoHoursAgo(flagged.map((s) => s.id));
      const first = await reconcileUnknownOutcomes(job());
      expect([...first.flagged].sort()).toEqual(flagged.map((s) => s.id).sort());
      expect(first.resolved).toEqual([]);
      const reviews = await payment.listPaymentSessions({ id: flagged.map((s) => s.id) });
      expect(reviews.every((s) => s.data?.state === "unknown" && !!s.data?.review_reason)).toBe(true);

      // A newer checkout whose answer is lost, inside the service's hour: its key must be resent.
      const [newer] = await unknownSessions(1);
      expect(orderOf(newer!.token)).toMatchObject([{ status: "NotActivated" }]);
      const second = await reconcileUnknownOutcomes(job());
      expect(second).toEqual({
        resolved: [newer!.id],
        stillUnknown: [],
        flagged: [],
        resent: [],
        converted: [],
      });
      // The cart never completed on it: what the service did was released, once.
      const [resolved] = await payment.listPaymentSessions({ id: newer!.id });
      expect(resolved?.data).toMatchObject({ state: "canceled", authorize_attempt: null });
      expect(orderOf(newer!.token)).toMatchObject([{ status: "Cancelled", capturedAmount: "0.00" }]);
      // The flagged sessions were left alone: same data, no key sent again.
      const after = await payment.listPaymentSessions({ id: flagged.map((s) => s.id) });
      expect(after.map((s) => s.data).sort(byId)).toEqual(reviews.map((s) => s.data).sort(byId));
      for (const { token } of flagged) expect(orderOf(token)).toMatchObject([{ status: "NotActivated" }]);

      expect(await reconcileUnknownOutcomes(job())).toEqual({
        resolved: [],
        stillUnknown: [],
        flagged: [],
        resent: [],
        converted: [],
      });
    }, 300_000);

    it("reads unknown sessions page by page until none is left: one run reaches them all", async () => {
      await orderLinkTable(medusaApp);
      const waiting = await unknownSessions(5);
      const report = await reconcileUnknownOutcomes(job(), new Date(), 2);
      expect([...report.resolved].sort()).toEqual(waiting.map((s) => s.id).sort());
      expect(report.stillUnknown).toEqual([]);
      for (const { token } of waiting) expect(orderOf(token)).toMatchObject([{ status: "Cancelled" }]);
    });
  },
);

function byId(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): number {
  return String(a?.session_id).localeCompare(String(b?.session_id));
}
