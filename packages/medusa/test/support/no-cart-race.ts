import type { IPaymentProvider } from "@medusajs/framework/types";
import { expect, it } from "vitest";
import { succeededEventOf } from "./lost-answer";
import type { SyncProviderContext } from "./sync-provider-tests";

// A payment collection without a cart (an order edit, an admin's, the charge-stored-token
// workflow's): Medusa's processPaymentWorkflow takes no lock for it and authorizes the session as
// soon as the authorization.succeeded webhook says so, while the call that sent the authorization
// (the charge workflow's authorizePaymentSession) may still be on its way back. Both then record a
// payment of the one session; the payment module's unique index refuses the second, and Medusa's
// rollback of that refusal cancels the payment at the provider: it must not release the service's
// order that the first payment holds, nor record anything twice.

/**
 * The two orders of that race, each followed by `expectSettled(sessionId, orderId, paymentId)`:
 * the one payment's figures against the service's order.
 */
export function noCartRaceTests(
  t: SyncProviderContext,
  expectSettled: (sessionId: string, orderId: string, paymentId: string) => Promise<void>,
): void {
  const { payment, suite, providerId, processWebhook } = t;

  async function expectOnePaymentHoldingTheOrder(sessionId: string) {
    const payments = await payment.listPayments({ payment_session_id: sessionId });
    expect(payments).toHaveLength(1);
    expect(payments[0]?.canceled_at ?? null).toBeNull();
    const [session] = await payment.listPaymentSessions({ id: sessionId });
    expect(session?.status).toBe("authorized");
    const orderId = (session?.data as { order_id?: string } | undefined)?.order_id ?? "";
    expect(payments[0]?.data).toMatchObject({ order_id: orderId });
    expect(t.serviceOrder(orderId)?.cancelledAmount).toBe("0.00");
    expect(t.serviceOrder(orderId)?.refundedAmount).toBe("0.00");
    await expectSettled(sessionId, orderId, payments[0]!.id);
    expect(
      t.logLines.some((line) => line.message.includes(`${sessionId} was authorized twice at once`)),
    ).toBe(true);
  }

  /** The provider's authorizePayment with `after(call number)` run once its real call returned. */
  function hookAuthorize(after: (call: number) => Promise<void>) {
    const provider = t.provider() as unknown as IPaymentProvider;
    const real = provider.authorizePayment;
    let calls = 0;
    provider.authorizePayment = async (input) => {
      calls += 1;
      const call = calls;
      const out = await real.call(provider, input);
      await after(call);
      return out;
    };
    return {
      calls: () => calls,
      restore: () => {
        provider.authorizePayment = real;
      },
    };
  }

  it("the webhook's payment is recorded first: the caller's duplicate releases nothing", async () => {
    const { session } = await suite.openSession(payment, providerId, 41);
    const hook = hookAuthorize(async (call) => {
      if (call !== 1) return;
      // The service answered; before the answer is back, its webhook is processed in full.
      const action = await processWebhook(session.id, await succeededEventOf(t.sandbox(), session.id));
      expect(["authorized", "captured"]).toContain(action.action);
    });
    try {
      // The caller's own payment is refused (one payment per session); what it reports is read
      // from the session afterwards (the charge workflow does).
      await payment.authorizePaymentSession(session.id, {}).catch((error: unknown) => error);
    } finally {
      hook.restore();
    }
    await expectOnePaymentHoldingTheOrder(session.id);
  });

  it("the caller's payment is recorded first: the webhook's duplicate releases nothing", async () => {
    const { session } = await suite.openSession(payment, providerId, 42);
    let webhookDone: Promise<unknown> | undefined;
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    const hook = hookAuthorize(async (call) => {
      if (call === 1) {
        // The webhook's workflow reads the session (no payment yet) and asks the provider, which
        // answers from the merged data; it records its payment only after the caller recorded its own.
        const event = await succeededEventOf(t.sandbox(), session.id);
        webhookDone = processWebhook(session.id, event).catch((error: unknown) => error);
        while (hook.calls() < 2) await new Promise((resolve) => setImmediate(resolve));
      } else {
        await gate;
      }
    });
    try {
      await payment.authorizePaymentSession(session.id, {});
      openGate();
      await webhookDone;
    } finally {
      hook.restore();
    }
    await expectOnePaymentHoldingTheOrder(session.id);
  });
}
