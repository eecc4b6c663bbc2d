import { expect, it } from "vitest";
import { followServiceOrder } from "../src/workflows/follow-service";
import { cancelMedusaOrder, orderCanceledSubscriber } from "./support/canceled-order";
import { syncProviderTests } from "./support/sync-provider-tests";

// Repairing a canceled order's payment reads Medusa's recorded captures, then captures the
// difference the service shows (followServiceOrder). The order-canceled subscriber, the reconcile
// job and a webhook's order.captured may do it on one payment at once: each read the same
// difference and captured it, so the service captured the missed amount twice (and kept the second
// capture, as Medusa then refunded only the first). They now take the payment's lock in turn.

syncProviderTests("canceled-orders-concurrent", (t) => {
  const { payment } = t;

  /** An order of 100 whose capture of 30 the service made but Medusa's records missed, canceled. */
  async function canceledWithLostCapture() {
    const { session, paymentId, orderId } = await t.authorizedPayment(100);
    await t.answerLost(() => payment.capturePayment({ payment_id: paymentId, amount: 30 }));
    expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00" });
    // Medusa's order cancel: its cancelPayment is refused (the service captured), the order canceled.
    await expect(payment.cancelPayment(paymentId)).rejects.toThrow(/refund it instead/);
    await cancelMedusaOrder(payment, t.medusaApp, session.payment_collection_id);
    return { session, paymentId, orderId };
  }

  /**
   * Runs `first` and `second` so that they overlap on the payment: the first to read the service's
   * order waits until the other reads it too (the old, unlocked code) or waits for the payment's
   * lock (advisory lock not granted in pg_locks).
   */
  async function overlapping(first: () => Promise<unknown>, second: () => Promise<unknown>) {
    const provider = t.provider();
    const original = provider.serviceOrder.bind(provider);
    let reads = 0;
    const waitingForLock = async () => {
      const { rows } = await t
        .pg()
        .raw("select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted", []);
      return (rows[0] as { n: number }).n > 0;
    };
    provider.serviceOrder = async (data) => {
      reads += 1;
      if (reads === 1)
        while (reads < 2 && !(await waitingForLock())) await new Promise((r) => setImmediate(r));
      return original(data);
    };
    try {
      const results = await Promise.allSettled([first(), second()]);
      expect(results.map((result) => result.status)).toEqual(["fulfilled", "fulfilled"]);
    } finally {
      provider.serviceOrder = original;
    }
  }

  async function recorded(paymentId: string) {
    const paid = await payment.retrievePayment(paymentId, { relations: ["captures", "refunds"] });
    return {
      captures: paid.captures?.map((c) => Number(c.amount)),
      refunds: paid.refunds?.map((r) => Number(r.amount)),
    };
  }

  it("the subscriber and the job at once capture the missed amount once and refund it", async () => {
    const { session, paymentId, orderId } = await canceledWithLostCapture();
    await overlapping(
      () => orderCanceledSubscriber(payment, t.container(), session.payment_collection_id),
      () => t.runJob(),
    );
    expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00", refundedAmount: "30.00" });
    expect(await recorded(paymentId)).toEqual({ captures: [30], refunds: [30] });
  });

  it("a webhook's follow during the job captures the missed amount once", async () => {
    const { paymentId, orderId } = await canceledWithLostCapture();
    await overlapping(
      () => followServiceOrder(t.container(), orderId),
      () => t.runJob(),
    );
    await t.runJob();
    expect(t.serviceOrder(orderId)).toMatchObject({ capturedAmount: "30.00", refundedAmount: "30.00" });
    expect(await recorded(paymentId)).toEqual({ captures: [30], refunds: [30] });
  });

  it("as many follows at once as the pool has connections all finish (the locks leave connections for the work)", async () => {
    const pool = (t.pg() as unknown as { client: { pool: { max: number } } }).client.pool;
    const orders: string[] = [];
    for (let i = 0; i < pool.max; i++) orders.push((await t.authorizedPayment(40 + i)).orderId);
    // Each holder of a lock used to keep a connection idle in its transaction while its work waited
    // for another: with every connection held, one follow failed when knex gave up a minute later.
    const results = await Promise.allSettled(
      orders.map((orderId) => followServiceOrder(t.container(), orderId)),
    );
    expect(results.filter((result) => result.status === "rejected")).toEqual([]);
  }, 150_000);
});
