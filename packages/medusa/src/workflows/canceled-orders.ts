import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { formatCents } from "@purchase-auth/core";
import { sumExact, toCentsRounded } from "../providers/purchase-auth/amounts";
import { RECORDED_BY_PLUGIN } from "../providers/purchase-auth/payment-module-records";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { readData, writeData } from "../providers/purchase-auth/session-data";
import { followServicePayment } from "./follow-service";
import { knexOf } from "./lookups";
import { recordOrderTransactions } from "./order-transactions";
import { withPaymentLock } from "./payment-lock";

// A canceled Medusa order must leave nothing with the service. Medusa's cancelOrderWorkflow refunds
// what its records show captured and cancels the payments without captures, but its
// cancelPaymentStep only logs a failure and goes on, and a capture whose answer was lost is not in
// its records: the order ends canceled while the service still holds an authorization or captured
// money. The order-canceled subscriber marks the order's payments (`medusa_canceled_at` in their
// data, shown to the merchant) and releases them; the reconcile job repeats it for every payment of
// a canceled order that may still hold money.

/**
 * Marks payment `paymentId` as belonging to a canceled Medusa order (`medusa_canceled_at` in its
 * data, shown to the merchant), unless marked already. One statement merges the mark into the row:
 * the payment module's update writes the whole data, so a read-modify-write would move a concurrent
 * writer's figures back (a stale, lower `refunded_amount` makes a later refund count as done
 * without sending it).
 */
export async function markOrderCanceled(
  container: MedusaContainer,
  paymentId: string,
  at = new Date(),
): Promise<void> {
  await knexOf(container).raw(
    `update payment
     set data = coalesce(data, '{}'::jsonb) || jsonb_build_object('medusa_canceled_at', ?::text),
         updated_at = now()
     where id = ? and deleted_at is null and (data is null or data->>'medusa_canceled_at' is null)`,
    [at.toISOString(), paymentId],
  );
}

/**
 * Gives back what live payment `paymentId` of a canceled order still holds, as Medusa's order cancel
 * would have had its records been the service's: first Medusa's records are brought to the service's
 * order (followServiceOrder: a capture or cancel Medusa missed is recorded), then a payment without
 * captures is canceled (the provider counts an order already cancelled as done), the uncaptured
 * remainder of a captured one is released, and what it captured and did not refund is refunded
 * through the payment module. Throws when the service cannot be reached (nothing is lost: the
 * keys derive from Medusa's records, a repeat sends nothing twice).
 */
export async function releaseCanceledOrderPayment(
  container: MedusaContainer,
  orderLabel: string,
  paymentId: string,
): Promise<void> {
  // One at a time per payment, in every process (payment-lock.ts): the subscriber and the job (or a
  // webhook's follow) would otherwise both capture the difference they read, or refund it twice.
  await withPaymentLock(container, paymentId, () => releaseLocked(container, orderLabel, paymentId));
}

async function releaseLocked(
  container: MedusaContainer,
  orderLabel: string,
  paymentId: string,
): Promise<void> {
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  // Read under the lock: what an earlier holder recorded is seen.
  const before = await payment.retrievePayment(paymentId, { select: ["id", "provider_id", "data"] });
  if (readData(before.data ?? undefined).order_id)
    await followServicePayment(container, {
      id: paymentId,
      provider_id: before.provider_id,
      data: before.data ?? null,
    });
  const stored = await payment.retrievePayment(paymentId, {
    select: ["id", "provider_id", "data", "canceled_at"],
    relations: ["captures", "refunds"],
  });
  if (stored.canceled_at) return;
  const cents = (rows: Array<{ raw_amount?: unknown; amount: unknown }> | undefined) =>
    toCentsRounded(sumExact((rows ?? []).map((row) => row.raw_amount ?? row.amount)));
  const captured = cents(stored.captures as never);
  if (captured === 0n) {
    await payment.cancelPayment(paymentId);
    logger.info(
      `purchase-auth: ${orderLabel} canceled: payment ${paymentId}, which Medusa's order cancel left uncanceled, is canceled and its authorization released at the service`,
    );
    return;
  }
  const released = await purchaseAuthProvider(container, stored.provider_id).releaseRemainder(
    stored.data,
    paymentId,
  );
  await payment.updatePayment({ id: paymentId, data: writeData(released) } as Parameters<
    IPaymentModuleService["updatePayment"]
  >[0]);
  const toRefund = captured - cents(stored.refunds as never);
  if (toRefund > 0n) {
    await payment.refundPayment({
      payment_id: paymentId,
      amount: formatCents(toRefund),
      created_by: RECORDED_BY_PLUGIN,
    });
    await recordOrderTransactions(container, paymentId);
    logger.warn(
      `purchase-auth: ${orderLabel} canceled: payment ${paymentId} had ${formatCents(toRefund)} captured that Medusa's order cancel did not refund (its records did not show it then); it is refunded`,
    );
  }
  logger.info(
    `purchase-auth: ${orderLabel} canceled: the uncaptured remainder of payment ${paymentId} was released at the service (${released.service_status}, released ${released.cancelled_amount})`,
  );
}

/** How many payments of canceled orders one job run looks at. */
const CANCELED_PAGE_SIZE = 100;

/**
 * The reconcile job's part: this provider's payments of canceled Medusa orders (the order's status
 * `canceled` in Medusa's order table, found through the order–payment-collection link) that may
 * still hold money: live (not canceled in Medusa) with their service order's last known status
 * NotActivated or PartActivated (or never read), or more captured than refunded in Medusa. The
 * order decides, not the payment collection: Medusa rewrites a collection's status on every
 * capture, refund and authorization (a canceled order's collection may read `completed` once the
 * job recorded a capture Medusa missed), a success authorized after the subscriber looked leaves
 * nothing marked, and cancelPaymentCollectionWorkflow cancels a collection whose order lives on.
 * Each is released; a failure is logged and left for the next run. The least recently tried come
 * first (each attempt stamps `release_tried_at` on the payment's row): payments that fail every run,
 * however many, go behind the others, so every candidate is reached within a few runs. Returns the
 * ids released.
 */
export async function releaseCanceledOrderPayments(
  container: MedusaContainer,
  /** @internal How many payments one run tries. */
  pageSize = CANCELED_PAGE_SIZE,
): Promise<string[]> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const { rows } = await knexOf(container).raw(
    `select p.id, o.id as order_id from payment p
     join order_payment_collection opc on opc.payment_collection_id = p.payment_collection_id
       and opc.deleted_at is null
     join "order" o on o.id = opc.order_id and o.deleted_at is null
     where p.deleted_at is null and p.canceled_at is null and p.provider_id like ?
       and (o.status = 'canceled' or o.canceled_at is not null)
       and (coalesce(p.data->>'service_status', 'NotActivated') in ('NotActivated', 'PartActivated')
            or coalesce((select sum(c.amount) from capture c where c.payment_id = p.id and c.deleted_at is null), 0)
               > coalesce((select sum(r.amount) from refund r where r.payment_id = p.id and r.deleted_at is null), 0))
     order by p.data->>'release_tried_at' asc nulls first, p.id limit ?`,
    ["pp_purchase-auth%", pageSize],
  );
  const released: string[] = [];
  for (const row of rows as unknown as Array<{ id: string; order_id: string }>) {
    try {
      await releaseCanceledOrderPayment(container, `order ${row.order_id}`, row.id);
      released.push(row.id);
    } catch (error) {
      logger.warn(
        `purchase-auth: payment ${row.id} of a canceled order may still hold money at the service and releasing it failed (${(error as Error).message}); the next run tries again`,
      );
    } finally {
      await stampReleaseTried(container, row.id).catch(() => undefined);
    }
  }
  return released;
}

/**
 * Records on payment `paymentId`'s row that the job just tried to release it (one merge; a whole-data
 * write of the payment module may drop it again, which only puts the payment first once more).
 */
async function stampReleaseTried(container: MedusaContainer, paymentId: string): Promise<void> {
  await knexOf(container).raw(
    `update payment set data = coalesce(data, '{}'::jsonb) || jsonb_build_object('release_tried_at', ?::text)
     where id = ? and deleted_at is null`,
    [new Date().toISOString(), paymentId],
  );
}
