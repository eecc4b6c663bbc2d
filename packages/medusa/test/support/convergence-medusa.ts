import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, PaymentCollectionStatus } from "@medusajs/framework/utils";
import { formatCents } from "@purchase-auth/core";
import { sumExact, toCentsRounded } from "../../src/providers/purchase-auth/amounts";
import purchaseAuthCustomerDeleted from "../../src/subscribers/purchase-auth-customer-deleted";
import purchaseAuthOrderCanceled from "../../src/subscribers/purchase-auth-order-canceled";
import { cancelMedusaOrder } from "./canceled-order";
import { tally, type World } from "./convergence-world";

// The convergence property's steps that Medusa's order and customer workflows take (the payment
// module runs alone in these tests: each session's payment collection stands for one Medusa order,
// `order_<collection id>`, and Medusa's query is answered from the payment module's own records).

const cents = (rows: Array<{ raw_amount?: unknown; amount: unknown }> | undefined) =>
  toCentsRounded(sumExact((rows ?? []).map((row) => row.raw_amount ?? row.amount)));

/** The Medusa order a session's payment collection stands for. */
export function orderOfSession(world: World, sessionId: string): string {
  const session = world.sessions.find((s) => s.id === sessionId)!;
  return `order_${session.payment_collection_id}`;
}

/** The drawn session first, then the scenario's others. */
function fromDrawn(world: World, sessionId: string): string[] {
  return [sessionId, ...world.sessions.map((s) => s.id).filter((id) => id !== sessionId)];
}

/**
 * Medusa cancels a payment (the admin, or cancelOrderWorkflow's cancelPaymentStep): the payment
 * module's cancelPayment on the live payment of the drawn session, else of another.
 */
export async function cancelPayment(world: World, drawn: string): Promise<void> {
  let live: Awaited<ReturnType<World["livePayment"]>>;
  for (const id of fromDrawn(world, drawn)) {
    live = await world.livePayment(id);
    if (live !== undefined) break;
  }
  if (live === undefined) return;
  try {
    await world.payment.cancelPayment(live.payment.id);
    tally.paymentCancels++;
  } catch {
    tally.moneyStepsRefused++;
  }
}

/**
 * Medusa's cancelOrderWorkflow (2.21) for the order of the drawn session's collection (else of
 * another's), once its cart completed (a payment exists) and while it is not canceled: what each payment captured and did not refund is refunded, payments
 * without captures are canceled (cancelPaymentStep logs a failure and goes on), and only if nothing
 * threw is the order canceled and `order.canceled` emitted, which runs the plugin's subscriber (the
 * local event bus logs a subscriber's error and drops it).
 */
export async function cancelOrder(world: World, drawn: string): Promise<void> {
  for (const sessionId of fromDrawn(world, drawn)) {
    if (world.canceledOrders.has(sessionId)) continue;
    const session = world.sessions.find((s) => s.id === sessionId)!;
    const payments = await paymentsOfCollection(world, session.payment_collection_id, [
      "captures",
      "refunds",
    ]);
    if (payments.length > 0) return await cancelOrderOf(world, sessionId, payments);
  }
}

async function cancelOrderOf(
  world: World,
  sessionId: string,
  payments: Awaited<ReturnType<typeof paymentsOfCollection>>,
): Promise<void> {
  const session = world.sessions.find((s) => s.id === sessionId)!;
  const refunds = payments
    .filter((p) => (p.captures ?? []).length > 0)
    .map((p) => ({ id: p.id, amount: cents(p.captures as never) - cents(p.refunds as never) }))
    .filter((p) => p.amount > 0n);
  const uncaptured = payments.filter((p) => (p.captures ?? []).length === 0).map((p) => p.id);
  for (const id of uncaptured) await world.payment.cancelPayment(id).catch(() => undefined);
  try {
    for (const refund of refunds)
      await world.payment.refundPayment({ payment_id: refund.id, amount: formatCents(refund.amount) });
  } catch {
    tally.orderCancelsRefused++;
    return;
  }
  // updatePaymentCollectionStep: the order's payment collections are canceled with it, and the order.
  await cancelMedusaOrder(world.payment, world.ctx.medusaApp, session.payment_collection_id);
  world.canceledOrders.add(sessionId);
  tally.orderCancels++;
  await purchaseAuthOrderCanceled({
    event: { name: "order.canceled", data: { id: orderOfSession(world, sessionId) } },
    container: withQuery(world),
    pluginOptions: {},
  } as never).catch(() => undefined);
  // Medusa rewrites a collection's status on every capture, refund and authorization
  // (maybeUpdatePaymentCollection_): every other canceled order's collection reads `completed`
  // afterwards, which must not hide it from the reconcile job.
  if (world.sessions.findIndex((s) => s.id === sessionId) % 2 === 0) {
    await world.payment.updatePaymentCollections(session.payment_collection_id, {
      status: PaymentCollectionStatus.COMPLETED,
    });
    tally.canceledCollectionsRewritten++;
  }
}

/**
 * Medusa deletes the session's customer: `customer.deleted` runs the plugin's subscriber, with the
 * `cancelTokensOnCustomerDelete` option or without.
 */
export async function deleteCustomer(world: World, index: number, cancelAtService: boolean): Promise<void> {
  const customerId = world.customers[index % world.customers.length]!;
  if (world.deletedCustomers.has(customerId)) return;
  world.deletedCustomers.add(customerId);
  tally.customersDeleted++;
  await purchaseAuthCustomerDeleted({
    event: { name: "customer.deleted", data: { id: customerId } },
    container: world.ctx.container(),
    pluginOptions: { cancelTokensOnCustomerDelete: cancelAtService },
  } as never).catch(() => undefined);
}

/** The payments of a payment collection, canceled ones included (as Medusa's query lists them). */
async function paymentsOfCollection(world: World, collectionId: string, relations: string[]) {
  const filters = { payment_collection_id: collectionId } as Parameters<World["payment"]["listPayments"]>[0];
  return await world.payment.listPayments(filters, { relations });
}

/**
 * The job's container with Medusa's query for the one graph the order-canceled subscriber reads: an
 * order's payment collections, with their payments (and captures) and payment sessions.
 */
function withQuery(world: World): MedusaContainer {
  const container = world.ctx.container();
  const query = {
    graph: async ({ entity, filters }: { entity: string; filters: { id: string } }) => {
      if (entity !== "order") throw new Error(`the test's query answers orders only, not ${entity}`);
      const session = world.sessions.find((s) => orderOfSession(world, s.id) === filters.id);
      if (session === undefined) return { data: [] };
      const collectionId = session.payment_collection_id;
      const payments = await paymentsOfCollection(world, collectionId, ["captures"]);
      const sessions = await world.payment.listPaymentSessions({ payment_collection_id: collectionId });
      return { data: [{ id: filters.id, payment_collections: [{ payments, payment_sessions: sessions }] }] };
    },
  };
  return {
    resolve: (key: string) => (key === ContainerRegistrationKeys.QUERY ? query : container.resolve(key)),
  } as unknown as MedusaContainer;
}
