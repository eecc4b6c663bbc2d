import { expect, it } from "vitest";
import type { PurchaseAuthProviderService } from "../src/providers/purchase-auth/service";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { authorizeWithLostAnswer } from "./support/lost-answer";
import { moduleSandbox, providerOf } from "./support/module-suite";
import { paymentModuleTests } from "./support/payment-module-tests";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";
import { recordingLogger } from "./support/recording-logger";

// The reconcile job resends an unknown session's key and finds the service's order, but someone wrote
// to the session meanwhile, so it cannot mark it releasing and releases nothing ("changed"). It must
// give its claim back: held for its 10 minutes, checkouts would be refused, webhooks dropped after
// waiting, and the job's next run would skip the session, leaving the order held at the service.

const DB_NAME = "purchase-auth-medusa-reconcile-changed-claim";
const WEBHOOK_SECRET = "whsec-reconcile-changed-claim";
const SYNC = "pp_purchase-auth_sync";
const suite = moduleSandbox(DB_NAME, WEBHOOK_SECRET);
const { logger } = recordingLogger();

paymentModuleTests(
  suite,
  {
    dbName: DB_NAME,
    logger,
    providers: [suite.providerConfig("sync", { attemptSchedule: "synchronous", maxRetries: 0 })],
  },
  ({ payment, medusaApp }) => {
    const sandbox = () => suite.state.sandbox!;
    const serviceOrder = (orderId: string) =>
      sandbox()
        .orders()
        .find((order) => order.orderId === orderId);
    const sessionData = async (id: string) => (await payment.listPaymentSessions({ id }))[0]?.data;
    const provider = () => providerOf(payment, SYNC) as unknown as PurchaseAuthProviderService;
    const runJob = () => reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger));
    const pg = () =>
      jobContainer(payment, medusaApp, logger).resolve("__pg_connection__") as {
        raw(sql: string, bindings: unknown[]): Promise<unknown>;
      };

    it("after the 'changed' outcome the job gives its claim back, so its next run releases the order", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 61);
      const { orderId } = (await authorizeWithLostAnswer(payment, sandbox(), session.id)).data;
      const resolveUnknown = provider().resolveUnknown;
      provider().resolveUnknown = async (...args) => {
        // Someone writes to the session while the job resends (the guarded intent write then fails).
        await pg().raw(
          `update payment_session set data = data || '{"failure_reason":"someone else"}'::jsonb where id = ?`,
          [session.id],
        );
        return await resolveUnknown.apply(provider(), args);
      };
      try {
        expect((await runJob()).stillUnknown).toContain(session.id);
      } finally {
        provider().resolveUnknown = resolveUnknown;
      }
      expect(serviceOrder(orderId)?.status).toBe("NotActivated");
      // Given back, and what the other writer wrote is kept.
      expect(await sessionData(session.id)).toMatchObject({
        state: "unknown",
        resend_claimed_by: null,
        failure_reason: "someone else",
      });
      const next = await runJob();
      expect({
        claimedBy: (await sessionData(session.id))?.resend_claimed_by,
        nextRunResolved: next.resolved.includes(session.id),
        serviceOrder: serviceOrder(orderId)?.status,
      }).toEqual({ claimedBy: null, nextRunResolved: true, serviceOrder: "Cancelled" });
    });
  },
);
