import type {
  BigNumberInput,
  CreateOrderTransactionDTO,
  IOrderModuleService,
  IPaymentModuleService,
  MedusaContainer,
} from "@medusajs/framework/types";
import { MathBN, Modules } from "@medusajs/framework/utils";
import { orderOfPaymentCollection } from "./lookups";

// A Medusa order counts what was paid by its transactions, one per capture (and, negative, per
// refund). Medusa's capture and refund workflows add them, but for every capture or refund of the
// payment that has none yet, each for the amount the workflow was asked for (Medusa 2.21:
// `input.amount ?? capture.amount`). The captures and refunds the plugin records itself, following
// the service (the payment module's own calls, outside any workflow), had none: the order's paid
// total left them out, and the next admin capture gave them the admin's amount. So whenever the
// plugin records one, it gets a transaction for its own amount. Medusa's steps look for an existing
// transaction of a row first, so they add none twice.
// - Every capture of the payment without a transaction gets one: all of Medusa's flows key a
//   capture's by the capture's id, so a capture without one is the plugin's (or one whose workflow
//   is about to add it, for the same amount).
// - Only the refunds recorded since `refundsBefore`: Medusa's order cancel keys its refunds'
//   transactions by the payment's id, not the refund's, and must not be counted twice.

/**
 * Gives each capture of payment `paymentId` without an order transaction its own, and each refund
 * not in `refundsBefore` (the ids the payment had before the caller recorded its refund) too.
 */
export async function recordOrderTransactions(
  container: MedusaContainer,
  paymentId: string,
  refundsBefore: ReadonlySet<string>,
): Promise<void> {
  const payments = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const payment = await payments.retrievePayment(paymentId, {
    select: ["id", "payment_collection_id", "currency_code"],
    relations: ["captures", "refunds"],
  });
  const orderId = await orderOfPaymentCollection(container, payment.payment_collection_id);
  if (!orderId) return;
  const amountOf = (row: { raw_amount?: unknown; amount: unknown }) =>
    (row.raw_amount ?? row.amount) as BigNumberInput;
  const rows: CreateOrderTransactionDTO[] = [
    ...(payment.captures ?? []).map((capture) => ({
      order_id: orderId,
      amount: amountOf(capture),
      currency_code: payment.currency_code,
      reference: "capture",
      reference_id: capture.id,
    })),
    ...(payment.refunds ?? [])
      .filter((refund) => !refundsBefore.has(refund.id))
      .map((refund) => ({
        order_id: orderId,
        amount: MathBN.mult(amountOf(refund), -1),
        currency_code: payment.currency_code,
        reference: "refund",
        reference_id: refund.id,
      })),
  ];
  // A payment module run without Medusa's order module (its tests) links no order's transactions.
  const orders = container.resolve<IOrderModuleService | undefined>(Modules.ORDER, {
    allowUnregistered: true,
  });
  if (rows.length === 0 || !orders) return;
  const existing = await orders.listOrderTransactions(
    { order_id: orderId, reference_id: rows.map((row) => row.reference_id!) },
    { select: ["reference", "reference_id"] },
  );
  const recorded = new Set(
    existing.map((transaction) => `${transaction.reference}:${transaction.reference_id}`),
  );
  const missing = rows.filter((row) => !recorded.has(`${row.reference}:${row.reference_id}`));
  if (missing.length > 0) await orders.addOrderTransactions(missing);
}
