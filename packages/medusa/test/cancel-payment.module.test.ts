import { expect, it } from "vitest";
import { cancelMedusaOrder, orderCanceledSubscriber } from "./support/canceled-order";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// Medusa canceling a payment (cancelPayment), and canceling its order: found by the convergence
// property's cancel steps. A cancel must never let Medusa record "canceled" while the service holds
// captured money, a cancel whose answer was lost must count as done once the service has forgotten
// its key, and a canceled order must not keep its authorization held because Medusa's order cancel
// logged its payment's failed cancel and went on.

syncProviderTests("cancel-payment", (t) => {
  const { payment } = t;
  const ORDERS = { method: "POST", path: "/manage/orders" };

  async function canceledAt(paymentId: string) {
    return (await payment.retrievePayment(paymentId, { select: ["id", "canceled_at"] })).canceled_at ?? null;
  }

  it("canceling a partly captured payment is refused and releases nothing", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(30);
    await payment.capturePayment({ payment_id: paymentId, amount: 10 });
    await expect(payment.cancelPayment(paymentId)).rejects.toThrow(/refund it instead/);
    expect(await canceledAt(paymentId)).toBeNull();
    expect(t.serviceOrder(orderId)).toMatchObject({
      status: "PartActivated",
      capturedAmount: "10.00",
      cancelledAmount: "0.00",
    });
  });

  it("a cancel whose answer was lost counts as done after the service's idempotency hour", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(31);
    await t.answerLost(() => payment.cancelPayment(paymentId));
    expect(t.serviceOrder(orderId)?.status).toBe("Cancelled");
    // The service forgets the key after its hour: the retry must not depend on it.
    t.sandbox().advanceClock(65 * 60_000);
    await payment.cancelPayment(paymentId);
    expect(await canceledAt(paymentId)).not.toBeNull();
  });

  /** Medusa's cancelOrderWorkflow whose cancelPaymentStep failed: logged, the order canceled anyway. */
  async function orderCanceledWithPaymentLive(amount: number) {
    const order = await t.authorizedPayment(amount);
    t.sandbox().injectFault({ kind: "unavailable", match: ORDERS, count: null });
    try {
      await expect(payment.cancelPayment(order.paymentId)).rejects.toThrow();
    } finally {
      t.sandbox().clearFaults();
    }
    await cancelMedusaOrder(payment, t.medusaApp, order.session.payment_collection_id);
    expect(await canceledAt(order.paymentId)).toBeNull();
    expect(t.serviceOrder(order.orderId)?.status).toBe("NotActivated");
    return order;
  }

  it("the order-canceled subscriber cancels a payment the order cancel left live", async () => {
    const { session, paymentId, orderId } = await orderCanceledWithPaymentLive(32);
    await orderCanceledSubscriber(payment, t.container(), session.payment_collection_id);
    expect(await canceledAt(paymentId)).not.toBeNull();
    expect(t.serviceOrder(orderId)?.status).toBe("Cancelled");
  });

  it("money captured for a canceled order that Medusa's records missed is refunded", async () => {
    const { session, paymentId, orderId } = await t.authorizedPayment(34);
    // The capture went through at the service; its answer was lost, so Medusa dropped its record.
    await t.answerLost(() => payment.capturePayment({ payment_id: paymentId }));
    expect(t.serviceOrder(orderId)).toMatchObject({ status: "Activated", capturedAmount: "34.00" });
    // Medusa's order cancel: no captures in its records, so it cancels the payment (refused: the
    // service captured) and cancels the order anyway.
    await expect(payment.cancelPayment(paymentId)).rejects.toThrow(/refund it instead/);
    await cancelMedusaOrder(payment, t.medusaApp, session.payment_collection_id);
    await orderCanceledSubscriber(payment, t.container(), session.payment_collection_id);
    expect(t.serviceOrder(orderId)).toMatchObject({ status: "Returned", refundedAmount: "34.00" });
    const paid = await payment.retrievePayment(paymentId, { relations: ["captures", "refunds"] });
    expect(paid.captures?.map((c) => Number(c.amount))).toEqual([34]);
    expect(paid.refunds?.map((r) => Number(r.amount))).toEqual([34]);
  });

  it("the reconcile job cancels a payment of a canceled order that is still live", async () => {
    await orderLinkTable(t.medusaApp);
    const { paymentId, orderId } = await orderCanceledWithPaymentLive(33);
    await t.runJob();
    expect(await canceledAt(paymentId)).not.toBeNull();
    expect(t.serviceOrder(orderId)?.status).toBe("Cancelled");
    expect(
      t.logLines.some((line) =>
        line.message.includes(`payment ${paymentId}, which Medusa's order cancel left uncanceled`),
      ),
    ).toBe(true);
  });
});
