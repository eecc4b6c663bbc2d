import { expect, it } from "vitest";
import { cancelMedusaOrder } from "./support/canceled-order";
import { syncProviderTests } from "./support/sync-provider-tests";

// The reconcile job tries a page of payments of canceled orders per run (100). It took them in id
// order with no memory of earlier runs: a full page of payments whose release failed every run hid
// every payment behind them for ever. It now takes the least recently tried first.

const PAGE = 100;

syncProviderTests("canceled-orders-reach", (t) => {
  const { payment } = t;
  const ORDERS = { method: "POST", path: "/manage/orders" };

  it("payments that fail every run do not keep a later one from being released", async () => {
    // A page of canceled orders whose payment cancel fails (Medusa's and the job's: 503 on every
    // POST), created first (lower ids).
    const failing: string[] = [];
    for (let i = 0; i < PAGE; i++) {
      const { session, paymentId } = await t.authorizedPayment(10 + i);
      await cancelMedusaOrder(payment, t.medusaApp, session.payment_collection_id);
      failing.push(paymentId);
    }
    // Then one whose order the service cancelled but Medusa did not record it (the cancel's answer
    // was lost): releasing it sends nothing, only records the cancel.
    const last = await t.authorizedPayment(99);
    await t.answerLost(() => payment.cancelPayment(last.paymentId));
    expect(t.serviceOrder(last.orderId)?.status).toBe("Cancelled");
    await cancelMedusaOrder(payment, t.medusaApp, last.session.payment_collection_id);
    t.sandbox().injectFault({ kind: "unavailable", match: ORDERS, count: null });
    try {
      await t.runJob();
      await t.runJob();
    } finally {
      t.sandbox().clearFaults();
    }
    const after = await payment.retrievePayment(last.paymentId, { select: ["id", "canceled_at"] });
    expect(after.canceled_at).toBeTruthy();
    const stillLive = await payment.listPayments({ id: failing });
    expect(stillLive.filter((p) => !p.canceled_at)).toHaveLength(PAGE);
    // A page of payments and two job runs over them: longer than the default timeout under load.
  }, 240_000);
});
