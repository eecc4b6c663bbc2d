import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { writeData } from "../providers/purchase-auth/session-data";
import { knexOf } from "./lookups";

// A canceled Medusa order must leave nothing held at the service. Medusa's cancelOrderWorkflow
// cancels the payments without captures, but its cancelPaymentStep only logs a failure and goes on:
// the order and its payment collections end canceled while the payment (and the service's
// authorization) stays live. The order-canceled subscriber and the reconcile job release them.

/** A payment of a canceled order, as the subscriber and the job find it. */
export interface CanceledOrderPayment {
  id: string;
  provider_id: string;
  data: Record<string, unknown> | null;
  /** Whether Medusa recorded captures of it. */
  captured: boolean;
}

/**
 * Releases what `entry` (a live payment of a canceled order) still holds at the service: a payment
 * without captures is canceled through the payment module (Medusa's own cancel, repeated; the
 * provider counts an order already cancelled as done), the uncaptured remainder of a partly captured
 * one is released at the service and its data updated. Throws when the service cannot be reached.
 */
export async function releaseCanceledOrderPayment(
  container: MedusaContainer,
  orderLabel: string,
  entry: CanceledOrderPayment,
): Promise<void> {
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  if (!entry.captured) {
    await payment.cancelPayment(entry.id);
    logger.info(
      `purchase-auth: ${orderLabel} canceled: payment ${entry.id}, which Medusa's order cancel left uncanceled, is canceled and its authorization released at the service`,
    );
    return;
  }
  const released = await purchaseAuthProvider(container, entry.provider_id).releaseRemainder(
    entry.data,
    entry.id,
  );
  await payment.updatePayment({ id: entry.id, data: writeData(released) } as Parameters<
    IPaymentModuleService["updatePayment"]
  >[0]);
  logger.info(
    `purchase-auth: ${orderLabel} canceled: the uncaptured remainder of payment ${entry.id} was released at the service (${released.service_status}, released ${released.cancelled_amount})`,
  );
}

/** How many payments of canceled orders one job run looks at. */
const CANCELED_PAGE_SIZE = 100;

/**
 * The reconcile job's part: this provider's live payments of canceled payment collections (Medusa's
 * order cancel marks them canceled) whose service order may still hold money (its last known status
 * NotActivated or PartActivated, or never read), released one by one. A failure is logged and left
 * for the next run. Returns the ids released.
 */
export async function releaseCanceledOrderPayments(container: MedusaContainer): Promise<string[]> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const { rows } = await knexOf(container).raw(
    `select p.id, p.provider_id, p.data, p.payment_collection_id,
            exists (select 1 from capture c where c.payment_id = p.id and c.deleted_at is null) as captured
     from payment p join payment_collection pc on pc.id = p.payment_collection_id
     where pc.status = 'canceled' and pc.deleted_at is null
       and p.deleted_at is null and p.canceled_at is null and p.provider_id like ?
       and coalesce(p.data->>'service_status', 'NotActivated') in ('NotActivated', 'PartActivated')
     order by p.id limit ?`,
    ["pp_purchase-auth%", CANCELED_PAGE_SIZE],
  );
  const released: string[] = [];
  for (const row of rows as unknown as Array<CanceledOrderPayment & { payment_collection_id: string }>) {
    try {
      await releaseCanceledOrderPayment(
        container,
        `the order of payment collection ${row.payment_collection_id}`,
        row,
      );
      released.push(row.id);
    } catch (error) {
      logger.warn(
        `purchase-auth: payment ${row.id} of a canceled order still holds money at the service and releasing it failed (${(error as Error).message}); the next run tries again`,
      );
    }
  }
  return released;
}
