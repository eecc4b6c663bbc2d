import { expect, it } from "vitest";
import { PaymentModuleRecords } from "../src/providers/purchase-auth/payment-module-records";
import { authorizeWithLostAnswer, deliverWebhook } from "./support/lost-answer";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// A checkout claims the resend of an unknown session's key, then stalls past the claim's 10 minutes.
// The reconcile job takes the abandoned claim over, resends, finds the order and cancels it. When the
// checkout wakes, the same key replays the 200: it must refuse, not return authorized (Medusa would
// record a payment for an order the service cancelled), and log an ERROR naming session and order.
// A checkout whose own claim was never taken over, but whose session the original success's webhook
// authorized meanwhile, is refused too (Medusa has that payment), with an INFO line, not an ERROR.

syncProviderTests(
  "checkout-stale-claim",
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
    pg,
  }) => {
    it("a checkout whose claim went stale while the job took it over and released the order is refused", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 62);
      const { orderId } = (await authorizeWithLostAnswer(payment, sandbox(), session.id)).data;
      const original = PaymentModuleRecords.prototype.claimResend;
      let tookOver = false;
      PaymentModuleRecords.prototype.claimResend = async function (
        this: PaymentModuleRecords,
        ...args: Parameters<PaymentModuleRecords["claimResend"]>
      ) {
        const claimed = await original.apply(this, args);
        if (claimed && args[2] === "checkout" && !tookOver) {
          tookOver = true;
          // The checkout's process stalls for more than 10 minutes after claiming...
          await pg().raw(
            `update payment_session set data = data || jsonb_build_object('resend_claimed_at', ?::text) where id = ?`,
            [new Date(Date.now() - 11 * 60_000).toISOString(), session.id],
          );
          // ...the job takes the abandoned claim over, resends, marks releasing and cancels the order.
          expect((await runJob()).resolved).toContain(session.id);
        }
        return claimed;
      };
      let refusal: unknown;
      try {
        await payment.authorizePaymentSession(session.id, {}).catch((error: unknown) => {
          refusal = error;
        });
      } finally {
        PaymentModuleRecords.prototype.claimResend = original;
      }
      expect(tookOver).toBe(true);
      expect(serviceOrder(orderId)?.status).toBe("Cancelled");
      expect((refusal as Error | undefined)?.message).toContain("canceled");
      const data = await sessionData(session.id);
      const payments = await payment.listPayments({ payment_session_id: session.id });
      expect({
        state: data?.state,
        payments: payments.length,
        review_reason: data?.review_reason ?? null,
      }).toEqual({
        state: "canceled",
        payments: 0,
        review_reason: null,
      });
      const errors = logLines.filter((line) => line.level === "error" && line.message.includes(session.id));
      expect(errors.some((line) => line.message.includes(orderId))).toBe(true);
    });

    it("a checkout whose own live claim meets the webhook's success is refused with an INFO line, not an ERROR", async () => {
      await orderLinkTable(medusaApp);
      const { session } = await suite.openSession(payment, SYNC, 85);
      const succeeded = await authorizeWithLostAnswer(payment, sandbox(), session.id);
      const original = PaymentModuleRecords.prototype.claimResend;
      let delivered = false;
      PaymentModuleRecords.prototype.claimResend = async function (
        this: PaymentModuleRecords,
        ...args: Parameters<PaymentModuleRecords["claimResend"]>
      ) {
        const claimed = await original.apply(this, args);
        if (claimed && args[2] === "checkout" && !delivered) {
          delivered = true;
          // Medusa's webhook subscriber processes the original success now.
          const action = await deliverWebhook(payment, "purchase-auth_sync", succeeded, webhookSecret);
          if (action.action === "authorized") await payment.authorizePaymentSession(session.id, {});
        }
        return claimed;
      };
      let checkout: unknown;
      try {
        checkout = await payment.authorizePaymentSession(session.id, {}).catch((e: Error) => e);
      } finally {
        PaymentModuleRecords.prototype.claimResend = original;
      }
      expect(delivered).toBe(true);
      const { orderId } = succeeded.data;
      const lines = logLines.filter((line) => line.message.includes(session.id));
      expect({
        checkout: checkout instanceof Error ? checkout.message : "authorized",
        payments: (await payment.listPayments({ payment_session_id: session.id })).length,
        serviceOrder: serviceOrder(orderId)?.status,
        errors: lines.filter((line) => line.level === "error").map((line) => line.message),
        settled: lines.some(
          (line) => line.level === "info" && line.message.includes("settled by its webhook"),
        ),
      }).toEqual({
        checkout: expect.stringContaining("authorized meanwhile"),
        payments: 1,
        serviceOrder: "NotActivated",
        errors: [],
        settled: true,
      });
    });
  },
);
