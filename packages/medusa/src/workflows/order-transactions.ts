import type {
  BigNumberInput,
  CreateOrderTransactionDTO,
  IOrderModuleService,
  IPaymentModuleService,
  MedusaContainer,
} from "@medusajs/framework/types";
import { MathBN, Modules } from "@medusajs/framework/utils";
import { RECORDED_BY_PLUGIN } from "../providers/purchase-auth/payment-module-records";
import { orderOfPaymentCollection } from "./lookups";

// A Medusa order counts what was paid by its transactions, one per capture (and, negative, per
// refund). Medusa's capture and refund workflows add them, but for every capture or refund of the
// payment that has none yet, each for the amount the workflow was asked for (Medusa 2.21:
// `input.amount ?? capture.amount`). The captures and refunds the plugin records itself, following
// the service (the payment module's own calls, outside any workflow), had none: the order's paid
// total left them out, and the next admin capture gave them the admin's amount. So the plugin marks
// the rows it records (`created_by`: RECORDED_BY_PLUGIN) and gives each its transaction, for its own
// amount, at once. Only those: another flow's row may be between its commit and its own transaction
// (or its provider call, which may fail and delete it), and Medusa's order cancel keys its refunds'
// transactions by the payment, not the refund. Medusa's steps look for an existing transaction of a
// row first, so they add none to the plugin's rows.

/** Gives each capture and refund the plugin recorded for payment `paymentId` its order transaction. */
export async function recordOrderTransactions(container: MedusaContainer, paymentId: string): Promise<void> {
  // A payment module run without Medusa's order module (its tests) links no order's transactions.
  const orders = container.resolve<IOrderModuleService | undefined>(Modules.ORDER, {
    allowUnregistered: true,
  });
  if (!orders) return;
  const payments = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const payment = await payments.retrievePayment(paymentId, {
    select: ["id", "payment_collection_id", "currency_code"],
    relations: ["captures", "refunds"],
  });
  const orderId = await orderOfPaymentCollection(container, payment.payment_collection_id);
  if (!orderId) return;
  const amountOf = (row: { raw_amount?: unknown; amount: unknown }) =>
    (row.raw_amount ?? row.amount) as BigNumberInput;
  const ours = (row: { created_by?: string | null }) => row.created_by === RECORDED_BY_PLUGIN;
  const rows: CreateOrderTransactionDTO[] = [
    ...(payment.captures ?? []).filter(ours).map((capture) => ({
      order_id: orderId,
      amount: amountOf(capture),
      currency_code: payment.currency_code,
      reference: "capture",
      reference_id: capture.id,
    })),
    ...(payment.refunds ?? []).filter(ours).map((refund) => ({
      order_id: orderId,
      amount: MathBN.mult(amountOf(refund), -1),
      currency_code: payment.currency_code,
      reference: "refund",
      reference_id: refund.id,
    })),
  ];
  if (rows.length === 0) return;
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
