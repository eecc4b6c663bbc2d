import { expect, it } from "vitest";
import { authorizeWithLostAnswer } from "./support/lost-answer";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// The reconcile job resends an unknown session's key and finds the service's order, but someone wrote
// to the session meanwhile, so it cannot mark it releasing and releases nothing ("changed"). It must
// give its claim back: held for its 10 minutes, checkouts would be refused, webhooks dropped after
// waiting, and the job's next run would skip the session, leaving the order held at the service.

syncProviderTests(
  "reconcile-changed-claim",
  ({
    payment,
    medusaApp,
    suite,
    providerId: SYNC,
    sandbox,
    serviceOrder,
    sessionData,
    provider,
    runJob,
    pg,
  }) => {
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
