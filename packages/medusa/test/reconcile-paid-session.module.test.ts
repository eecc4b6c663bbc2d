import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { expect, it } from "vitest";
import { reconcileUnknownOutcomes } from "../src/workflows/reconcile";
import { jobContainer, orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// A session Medusa already paid may still read `unknown` (a checkout's uncertain result written over
// a webhook's success after Medusa recorded the payment). The reconcile job must never claim it: in
// synchronous mode its resend replays the 200 and the job releases the order, which Medusa records
// as paid.

syncProviderTests("reconcile-paid-session", ({ payment, medusaApp, suite, logger, providerId: SYNC }) => {
  it("the job neither resends nor releases an unknown session that has a live Medusa payment", async () => {
    await orderLinkTable(medusaApp);
    const sandbox = suite.state.sandbox!;
    const { session } = await suite.openSession(payment, SYNC, 93);
    const paid = await payment.authorizePaymentSession(session.id, {});
    expect(paid).toMatchObject({ payment_session_id: session.id });
    const [authorized] = await payment.listPaymentSessions({ id: session.id });
    const orderId = (authorized?.data as { order_id?: string } | undefined)?.order_id;
    expect(orderId).toBeDefined();
    expect(sandbox.orders().find((order) => order.orderId === orderId)?.status).toBe("NotActivated");

    // The session's data reads unknown again, as after a checkout's result written over it.
    const pg = medusaApp.sharedContainer!.resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as {
      raw(sql: string, bindings: unknown[]): Promise<unknown>;
    };
    await pg.raw(
      `update payment_session set data = data || jsonb_build_object('state', 'unknown', 'authorize_attempt', 1, 'authorize_first_sent_at', ?::text) where id = ?`,
      [new Date().toISOString(), session.id],
    );

    await reconcileUnknownOutcomes(jobContainer(payment, medusaApp, logger));
    expect(sandbox.orders().find((order) => order.orderId === orderId)?.status).toBe("NotActivated");
    const [after] = await payment.listPaymentSessions({ id: session.id });
    expect(after?.data).toMatchObject({ state: "unknown", resend_claimed_at: null });
    const payments = await payment.listPayments({ payment_session_id: session.id });
    expect(payments).toHaveLength(1);
    expect(payments[0]?.canceled_at ?? null).toBeNull();
  });
});
