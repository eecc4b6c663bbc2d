import { PaymentCollectionStatus } from "@medusajs/framework/utils";
import { expect, it } from "vitest";
import { cancelMedusaOrder, medusaOrder } from "./support/canceled-order";
import { syncProviderTests } from "./support/sync-provider-tests";

// Which payments the reconcile job repairs: those of canceled Medusa ORDERS. It used to pick
// payments of canceled payment collections (or marked by the subscriber), but Medusa rewrites a
// collection's status on every capture, refund and authorization, so a canceled order whose lost
// capture the job recorded read `completed` and its refund, once failed, was never tried again; and
// cancelPaymentCollectionWorkflow cancels collections of live orders, whose payments it released.

syncProviderTests("canceled-orders-job", (t) => {
  const { payment } = t;

  async function collectionStatus(id: string) {
    const { rows } = await t.pg().raw("select status from payment_collection where id = ?", [id]);
    return (rows[0] as { status: string }).status;
  }

  it("a canceled order whose refund failed once is refunded by a later run, whatever its collection's status", async () => {
    const { session, paymentId, orderId } = await t.authorizedPayment(34);
    await t.answerLost(() => payment.capturePayment({ payment_id: paymentId }));
    await expect(payment.cancelPayment(paymentId)).rejects.toThrow(/refund it instead/);
    await cancelMedusaOrder(payment, t.medusaApp, session.payment_collection_id);
    // No subscriber ran (a crash, the event lost): the job records the capture, its refund meets 503s.
    const refund = { method: "POST", path: `/manage/orders/${orderId}/refund` };
    t.sandbox().injectFault({ kind: "unavailable", match: refund, count: null });
    try {
      await t.runJob();
    } finally {
      t.sandbox().clearFaults();
    }
    expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "34.00", refundedAmount: "0.00" });
    // Recording the capture made Medusa rewrite the collection's status.
    expect(await collectionStatus(session.payment_collection_id)).not.toBe("canceled");
    await t.runJob();
    expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "34.00", refundedAmount: "34.00" });
    const paid = await payment.retrievePayment(paymentId, { relations: ["captures", "refunds"] });
    expect(paid.captures?.map((c) => Number(c.amount))).toEqual([34]);
    expect(paid.refunds?.map((r) => Number(r.amount))).toEqual([34]);
  });

  it("a payment collection canceled while its order lives is not touched", async () => {
    const { session, paymentId, orderId } = await t.authorizedPayment(35);
    await medusaOrder(t.medusaApp, session.payment_collection_id);
    // cancelPaymentCollectionWorkflow: the collection canceled, the order not.
    await payment.updatePaymentCollections(session.payment_collection_id, {
      status: PaymentCollectionStatus.CANCELED,
    });
    await t.runJob();
    const paid = await payment.retrievePayment(paymentId, { select: ["id", "canceled_at"] });
    expect(paid.canceled_at ?? null).toBeNull();
    expect(t.serviceOrder(orderId)).toMatchObject({ status: "NotActivated", cancelledAmount: "0.00" });
  });
});
