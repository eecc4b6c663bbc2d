import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { convertDraftOrderWorkflow } from "@medusajs/medusa/core-flows";
import { formatCents } from "@purchase-auth/core";
import { toCentsRounded } from "../providers/purchase-auth/amounts";
import { knexOf, OURS, SESSION_PAGE_SIZE } from "./lookups";

// The admin's "charge the customer's saved payment method" on a draft order converts the draft once
// the service authorized or accepted the charge. When the route does not see that, the money is
// held for a draft nobody fulfils: the charge's outcome was unknown and the reconcile job, or the
// service's webhook, recorded the payment later; or the process stopped between the charge and the
// conversion. The job converts every draft order whose live payments of this plugin pay its total,
// as the route would have. A draft whose total changed after its charge (edited while the charge's
// outcome was unknown) is not: converting it would place an order nobody paid in full. It is left
// for a person, with a WARN line each run.

/** How a conversion ended: converted, no longer a draft (someone else converted it), or not. */
export type DraftConversion = "converted" | "not_a_draft" | "failed";

/**
 * Converts draft order `orderId` with Medusa's convertDraftOrderWorkflow, unless it is no longer a
 * draft (the admin route and the job may both get there: the loser finds an order, not an error).
 * "failed" carries the workflow's error.
 */
export async function convertDraft(
  container: MedusaContainer,
  orderId: string,
): Promise<{ kind: DraftConversion; error?: Error }> {
  if (!(await isDraft(container, orderId))) return { kind: "not_a_draft" };
  try {
    await convertDraftOrderWorkflow(container).run({ input: { id: orderId } });
    return { kind: "converted" };
  } catch (error) {
    if (!(await isDraft(container, orderId))) return { kind: "not_a_draft" };
    return { kind: "failed", error: error as Error };
  }
}

/**
 * Converts the draft orders whose live (not canceled) payments of a purchase-auth provider, net of
 * their refunds, pay their total to the cent. Returns the orders converted. A failure on one is
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
    for (const { id, paid } of drafts) {
      const total = await draftTotal(container, id);
      if (total === undefined) continue;
      if (paid !== total) {
        logger.warn(
          `purchase-auth: draft order ${id} holds payments of ${formatCents(paid)} for a total of ${formatCents(total)} (changed after its charge): not converted into an order; a person decides (charge the difference, or cancel the payment)`,
        );
        continue;
      }
      const { kind, error } = await convertDraft(container, id);
      if (kind === "converted") {
        converted.push(id);
        logger.info(
          `purchase-auth: draft order ${id} holds the payment of its charge: converted into an order`,
        );
      } else if (kind === "failed") {
        logger.warn(
          `purchase-auth: draft order ${id} holds the payment of its charge and could not be converted (${error?.message}); the next run tries again`,
        );
      }
    }
    if (drafts.length < pageSize) return converted;
    afterId = drafts[drafts.length - 1]!.id;
  }
}

async function isDraft(container: MedusaContainer, orderId: string): Promise<boolean> {
  const { rows } = await knexOf(container).raw(
    `select 1 from "order" where id = ? and is_draft_order = true and status = 'draft' and deleted_at is null`,
    [orderId],
  );
  return rows.length > 0;
}

/** The draft's total in cents, as Medusa computes it now; undefined when it is gone. */
async function draftTotal(container: MedusaContainer, orderId: string): Promise<bigint | undefined> {
  const query = container.resolve(ContainerRegistrationKeys.QUERY);
  const { data } = await query.graph({ entity: "order", fields: ["id", "total"], filters: { id: orderId } });
  const order = data[0] as { total?: unknown } | undefined;
  return order ? toCentsRounded(order.total) : undefined;
}

/**
 * Draft orders (ids above `afterId`) holding a live payment of this plugin, with what those
 * payments hold net of their refunds, in cents.
 */
async function chargedDrafts(
  container: MedusaContainer,
  afterId: string,
  limit: number,
): Promise<Array<{ id: string; paid: bigint }>> {
  const { rows } = await knexOf(container).raw(
    `select o.id,
       (sum(p.amount) - coalesce(sum((select sum(r.amount) from refund r
                                      where r.payment_id = p.id and r.deleted_at is null)), 0))::text as paid
     from "order" o
     join order_payment_collection opc on opc.order_id = o.id and opc.deleted_at is null
     join payment p on p.payment_collection_id = opc.payment_collection_id
       and p.deleted_at is null and p.canceled_at is null and p.provider_id like ?
     where o.is_draft_order = true and o.status = 'draft' and o.deleted_at is null and o.id > ?
     group by o.id order by o.id limit ?`,
    [OURS, afterId, limit],
  );
  return (rows as Array<{ id: string; paid: string }>).map((row) => ({
    id: row.id,
    paid: toCentsRounded(row.paid),
  }));
}
