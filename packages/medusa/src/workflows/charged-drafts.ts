import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { convertDraftOrderWorkflow } from "@medusajs/medusa/core-flows";
import { knexOf, OURS, SESSION_PAGE_SIZE } from "./lookups";

// The admin's "charge the customer's saved payment method" on a draft order converts the draft once
// the service authorized or accepted the charge. When the route does not see that, the money is
// held for a draft nobody fulfils: the charge's outcome was unknown and the reconcile job, or the
// service's webhook, recorded the payment later; or the process stopped between the charge and the
// conversion. The job converts every draft order that holds a live payment of this plugin, as the
// route would have.

/**
 * Converts the draft orders holding a live (not canceled) payment of a purchase-auth provider into
 * orders with Medusa's convertDraftOrderWorkflow. Returns the orders converted. A failure on one is
 * logged and the others go on; the next run tries it again.
 */
export async function convertChargedDrafts(
  container: MedusaContainer,
  pageSize = SESSION_PAGE_SIZE,
): Promise<string[]> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const converted: string[] = [];
  let afterId = "";
  for (;;) {
    const drafts = await chargedDrafts(container, afterId, pageSize);
    for (const id of drafts) {
      try {
        await convertDraftOrderWorkflow(container).run({ input: { id } });
        converted.push(id);
        logger.info(
          `purchase-auth: draft order ${id} holds a payment of its charge: converted into an order`,
        );
      } catch (error) {
        // The admin route converting it at the same moment: nothing left to do.
        if (!(await chargedDrafts(container, "", 1, id)).includes(id)) continue;
        logger.warn(
          `purchase-auth: draft order ${id} holds a payment of its charge and could not be converted (${(error as Error).message}); the next run tries again`,
        );
      }
    }
    if (drafts.length < pageSize) return converted;
    afterId = drafts[drafts.length - 1]!;
  }
}

/** Draft orders (ids above `afterId`, or only `onlyId`) holding a live payment of this plugin. */
async function chargedDrafts(
  container: MedusaContainer,
  afterId: string,
  limit: number,
  onlyId?: string,
): Promise<string[]> {
  const { rows } = await knexOf(container).raw(
    `select distinct o.id from "order" o
     join order_payment_collection opc on opc.order_id = o.id and opc.deleted_at is null
     join payment p on p.payment_collection_id = opc.payment_collection_id
       and p.deleted_at is null and p.canceled_at is null and p.provider_id like ?
     where o.is_draft_order = true and o.status = 'draft' and o.deleted_at is null
       and o.id > ? ${onlyId ? "and o.id = ?" : ""}
     order by o.id limit ?`,
    [OURS, afterId, ...(onlyId ? [onlyId] : []), limit],
  );
  return (rows as Array<{ id: string }>).map((row) => row.id);
}
