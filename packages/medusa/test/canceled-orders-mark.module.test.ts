import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { expect, it } from "vitest";
import { markOrderCanceled } from "../src/workflows/canceled-orders";
import { syncProviderTests } from "./support/sync-provider-tests";

// The order-canceled subscriber marks a canceled order's payments (`medusa_canceled_at`). It read
// the payment's data and wrote it whole through the payment module: a refund recorded between the
// read and the write had its `refunded_amount` moved back, and a later refund, keyed on that lower
// figure, counted as done without being sent. Only the mark is merged now, in one statement.

syncProviderTests("canceled-orders-mark", (t) => {
  const { payment, suite, providerId } = t;

  it("marking a payment keeps what a concurrent writer stored meanwhile", async () => {
    const { session } = await suite.openSession(payment, providerId, 40);
    const paymentId = (await payment.authorizePaymentSession(session.id, {}))!.id;
    const write = (data: Record<string, unknown>) =>
      payment.updatePayment({ id: paymentId, data } as Parameters<IPaymentModuleService["updatePayment"]>[0]);
    // A concurrent writer (a refund recorded) stores its figures after the mark read the payment
    // (if it reads it) and before the mark is written: the job's container runs it first thing when
    // the mark's statement is sent, or when its payment module is asked to write.
    let interleaved = false;
    const concurrentWriter = async () => {
      if (interleaved) return;
      interleaved = true;
      const current = await payment.retrievePayment(paymentId, { select: ["id", "data"] });
      await write({ ...current.data, refunded_amount: "7.00", service_status: "PartActivated" });
    };
    const base = t.container();
    const pg = t.pg();
    const hookedPg = {
      raw: async (sql: string, bindings: unknown[]) => {
        if (sql.includes("medusa_canceled_at")) await concurrentWriter();
        return pg.raw(sql, bindings);
      },
      transaction: pg.transaction.bind(pg),
    };
    const hooked = Object.create(payment) as IPaymentModuleService;
    hooked.updatePayment = (async (...args: Parameters<IPaymentModuleService["updatePayment"]>) => {
      await concurrentWriter();
      return payment.updatePayment(...args);
    }) as IPaymentModuleService["updatePayment"];
    // Older code took the payment module here, newer code the container: this object is both.
    const container = Object.assign(hooked, {
      resolve: (key: string) =>
        key === ContainerRegistrationKeys.PG_CONNECTION ? hookedPg : base.resolve(key),
    }) as unknown as MedusaContainer & IPaymentModuleService;
    await markOrderCanceled(container, paymentId);
    expect(interleaved).toBe(true);
    const stored = await payment.retrievePayment(paymentId, { select: ["id", "data"] });
    expect(stored.data).toMatchObject({ refunded_amount: "7.00", service_status: "PartActivated" });
    expect(typeof stored.data?.medusa_canceled_at).toBe("string");
  });
});
