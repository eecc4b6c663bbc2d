import type {
  BigNumberInput,
  CreateOrderTransactionDTO,
  IOrderModuleService,
  IPaymentModuleService,
  MedusaContainer,
} from "@medusajs/framework/types";
import { MathBN, Modules } from "@medusajs/framework/utils";
import { RECORDED_BY_PLUGIN } from "../providers/purchase-auth/payment-module-records";
import { knexOf, orderOfPaymentCollection } from "./lookups";

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
//
// And a transaction counts only while its row does. The reconcile job sets aside a row the service
// never got, and redoes it (recorded-writes.ts): a transaction the row had (a plugin row's, or one
// Medusa's workflow handed it) would count beside the redo's. A row Medusa deletes when its provider
// call fails may have been given one by a follow in between. Such transactions are soft-deleted
// (the order module then takes them out of the order's totals).

/**
 * Brings the order transactions of payment `paymentId`'s order in line with its captures and
 * refunds: none for a row set aside or gone, one for each row the plugin recorded, and one for
 * `redo`, the row of the job's redo whose workflow did not give it its own (it failed after the
 * service took the redo, or its process stopped before).
 */
export async function recordOrderTransactions(
  container: MedusaContainer,
  paymentId: string,
  redo?: { kind: "capture" | "refund"; id: string },
): Promise<void> {
  // A payment module run without Medusa's order module (its tests) links no order's transactions.
  const orders = container.resolve<IOrderModuleService | undefined>(Modules.ORDER, {
    allowUnregistered: true,
  });
  if (!orders) return;
  const payments = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const payment = await payments.retrievePayment(paymentId, {
    select: ["id", "payment_collection_id", "currency_code"],
  });
  const orderId = await orderOfPaymentCollection(container, payment.payment_collection_id);
  if (!orderId) return;
  await dropTransactionsOfRowsGone(container, orders, orderId);
  await giveRowsTheirTransactions(orders, payments, orderId, paymentId, redo);
}

/**
 * Soft-deletes the order's capture and refund transactions whose row is no longer live. Read before
 * the rows: a transaction is only ever added after its row, so a row missing then is gone for good
 * (Medusa's own transactions of a refund of its order cancel name the payment, not a refund row, and
 * are left alone).
 */
async function dropTransactionsOfRowsGone(
  container: MedusaContainer,
  orders: IOrderModuleService,
  orderId: string,
): Promise<void> {
  const transactions = (
    await orders.listOrderTransactions(
      { order_id: orderId, reference: ["capture", "refund"] },
      { select: ["id", "reference", "reference_id"] },
    )
  ).filter(({ reference, reference_id }) =>
    reference_id?.startsWith(reference === "capture" ? "capt_" : "ref_"),
  );
  if (transactions.length === 0) return;
  const ids = transactions.map((transaction) => transaction.reference_id!);
  const { rows } = await knexOf(container).raw(
    `select id from capture where id = any(?) and deleted_at is null
     union all select id from refund where id = any(?) and deleted_at is null`,
    [ids, ids],
  );
  const live = new Set((rows as unknown as Array<{ id: string }>).map((row) => row.id));
  const gone = transactions.filter((transaction) => !live.has(transaction.reference_id!));
  if (gone.length > 0) await orders.softDeleteOrderTransactions(gone.map((transaction) => transaction.id));
}

/** Gives each capture and refund the plugin recorded for the payment (and `redo`) its order transaction. */
async function giveRowsTheirTransactions(
  orders: IOrderModuleService,
  payments: IPaymentModuleService,
  orderId: string,
  paymentId: string,
  redo: { kind: "capture" | "refund"; id: string } | undefined,
): Promise<void> {
  const payment = await payments.retrievePayment(paymentId, {
    select: ["id", "currency_code"],
    relations: ["captures", "refunds"],
  });
  const amountOf = (row: { raw_amount?: unknown; amount: unknown }) =>
    (row.raw_amount ?? row.amount) as BigNumberInput;
  const ours = (kind: "capture" | "refund") => (row: { id: string; created_by?: string | null }) =>
    row.created_by === RECORDED_BY_PLUGIN || (redo?.kind === kind && redo.id === row.id);
  const rows: CreateOrderTransactionDTO[] = [
    ...(payment.captures ?? []).filter(ours("capture")).map((capture) => ({
      order_id: orderId,
      amount: amountOf(capture),
      currency_code: payment.currency_code,
      reference: "capture",
      reference_id: capture.id,
    })),
    ...(payment.refunds ?? []).filter(ours("refund")).map((refund) => ({
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
