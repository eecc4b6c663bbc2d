import { expect, it } from "vitest";
import { PaymentModuleRecords } from "../src/providers/purchase-auth/payment-module-records";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// A checkout claims the resend of an unknown session's key (the first answer, a decline, was lost),
// then stalls past the claim's 10 minutes. The reconcile job takes the abandoned claim over. When the
// checkout wakes, its resend gets the decline replayed: it must not clear the job's live claim
// (checkouts and webhooks would get in while the job resends, and the job could not record what it
// learned). The job then records the decline itself.

syncProviderTests(
  "checkout-stale-decline",
  ({ payment, medusaApp, suite, providerId: SYNC, sandbox, sessionData, provider, runJob, pg }) => {
    /** A session whose first attempt the service declined, with the answer lost: left unknown. */
    async function unknownDecline(amount: number) {
      const { session } = await suite.openSession(payment, SYNC, amount, suite.newToken({ funds: "0.00" }));
      sandbox().injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: "/purchase/authorizations" },
        count: null,
      });
      try {
        await expect(payment.authorizePaymentSession(session.id, {})).rejects.toThrow(/not authorized/);
      } finally {
        sandbox().clearFaults();
      }
      expect(await sessionData(session.id)).toMatchObject({ state: "unknown", authorize_attempt: 1 });
      return session;
    }

    it("a stale checkout's declined resend leaves the job's claim alone; the job records the decline", async () => {
      await orderLinkTable(medusaApp);
      const session = await unknownDecline(63);

      // The job, once it holds the claim, waits until the stale checkout has met its decline.
      let jobHoldsClaim!: () => void;
      const jobHasClaim = new Promise<void>((resolve) => {
        jobHoldsClaim = resolve;
      });
      let checkoutDone!: () => void;
      const checkoutFinished = new Promise<void>((resolve) => {
        checkoutDone = resolve;
      });
      const resolveUnknown = provider().resolveUnknown;
      provider().resolveUnknown = async (...args) => {
        jobHoldsClaim();
        await checkoutFinished;
        return await resolveUnknown.apply(provider(), args);
      };
      const claimResend = PaymentModuleRecords.prototype.claimResend;
      let job: ReturnType<typeof runJob> | undefined;
      PaymentModuleRecords.prototype.claimResend = async function (
        this: PaymentModuleRecords,
        ...args: Parameters<PaymentModuleRecords["claimResend"]>
      ) {
        const claimed = await claimResend.apply(this, args);
        if (claimed && args[2] === "checkout" && !job) {
          // The checkout's process stalls for more than 10 minutes after claiming...
          await pg().raw(
            `update payment_session set data = data || jsonb_build_object('resend_claimed_at', ?::text) where id = ?`,
            [new Date(Date.now() - 11 * 60_000).toISOString(), session.id],
          );
          // ...and the job takes the abandoned claim over.
          job = runJob();
          await jobHasClaim;
        }
        return claimed;
      };
      let declined: unknown;
      let whileJobHeldClaim: Record<string, unknown> | undefined;
      let report: Awaited<ReturnType<typeof runJob>> | undefined;
      try {
        await payment.authorizePaymentSession(session.id, {}).catch((error: unknown) => {
          declined = error;
        });
        whileJobHeldClaim = await sessionData(session.id);
      } finally {
        PaymentModuleRecords.prototype.claimResend = claimResend;
        checkoutDone();
        report = await job;
        provider().resolveUnknown = resolveUnknown;
      }

      expect((declined as Error | undefined)?.message).toMatch(/declined|funds/i);
      expect(whileJobHeldClaim).toMatchObject({
        state: "unknown",
        authorize_attempt: 1,
        resend_claimed_by: "reconcile job",
      });
      expect(report?.resolved).toContain(session.id);
      expect(await sessionData(session.id)).toMatchObject({
        state: "failed",
        authorize_attempt: 2,
        resend_claimed_at: null,
        resend_claimed_by: null,
      });
      expect(await payment.listPayments({ payment_session_id: session.id })).toEqual([]);
    });
  },
);
