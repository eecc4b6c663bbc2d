import { expect, it } from "vitest";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { moduleSandbox } from "./support/module-suite";
import { paymentModuleTests } from "./support/payment-module-tests";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";
import { recordingLogger } from "./support/recording-logger";

// An attempt whose first send never reached the service (the connection reset before it was
// processed) is unknown; the resend creates the authorization and is answered 202. The service
// starts its schedule at the resend, up to an hour after the first send: the session's
// authorize_sent_at, from which the reconcile job counts when its outcome is overdue, must not be
// the first send (that would flag it while the service is still attempting).

const DB_NAME = "purchase-auth-medusa-accepted-after-resend";
const ASYNC = "pp_purchase-auth_async";
const suite = moduleSandbox(DB_NAME, "whsec-accepted-after-resend");
const { logger } = recordingLogger();

paymentModuleTests(
  suite,
  {
    dbName: DB_NAME,
    logger,
    providers: [
      suite.providerConfig("async", { attemptSchedule: { relative: ["00.01:00:00"] }, maxRetries: 0 }),
    ],
  },
  ({ payment, medusaApp }) => {
    it("an authorization accepted at a resend counts its schedule from the resend, not the first send", async () => {
      await orderLinkTable(medusaApp);
      const sandbox = suite.state.sandbox!;
      const { session } = await suite.openSession(payment, ASYNC, 51);
      sandbox.injectFault({
        kind: "reset_before_processing",
        match: { method: "POST", path: "/purchase/authorizations" },
        count: null,
      });
      try {
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/not authorized/);
      } finally {
        sandbox.clearFaults();
      }
      const [unknown] = await payment.listPaymentSessions({ id: session.id });
      const firstSentAt = String(unknown?.data?.authorize_first_sent_at);
      expect(unknown?.data).toMatchObject({ state: "unknown", authorize_attempt: 1 });
      // The resend leaves strictly after the first send's millisecond.
      while (Date.now() <= Date.parse(firstSentAt)) await new Promise((done) => setImmediate(done));
      const resentNoEarlierThan = Date.now();

      const report = await reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger));
      expect(report.resolved).toEqual([session.id]);
      const [accepted] = await payment.listPaymentSessions({ id: session.id });
      const data = accepted?.data as { state: string; authorize_sent_at: string };
      expect(data.state).toBe("pending_authorization");
      expect(Date.parse(data.authorize_sent_at)).toBeGreaterThanOrEqual(resentNoEarlierThan);
    });
  },
);
