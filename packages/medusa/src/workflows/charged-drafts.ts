import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { convertDraftOrderWorkflow, updateOrderTaxLinesWorkflow } from "@medusajs/medusa/core-flows";
import { formatCents } from "@purchase-auth/core";
import { toCentsRounded } from "../providers/purchase-auth/amounts";
import { knexOf, OURS, SESSION_PAGE_SIZE } from "./lookups";

// The admin's "charge the customer's saved payment method" on a draft order converts the draft once
// the service authorized or accepted the charge. When the route does not see that, the money is
// held for a draft nobody fulfils: the charge's outcome was unknown and the reconcile job, or the
// service's webhook, recorded the payment later; or the process stopped between the charge and the
// conversion. The job converts every draft order whose live payments of this plugin pay its total,
// as the route would have. A draft whose total changed after its charge (edited while the charge's
// outcome was unknown) is not: converting it would place an order nobody paid in full. Its payment
// is flagged for a person, once, and later runs leave it alone.

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

/** What a charged draft's payments pay against its total, re-taxed as converting does, in cents. */
export interface DraftPaid {
  /** The live payments of this plugin net of refunds; undefined when there is none (a 202 pending). */
  paid: bigint | undefined;
  total: bigint;
}

/**
 * The draft's total after its tax lines are computed again (convertDraftOrderWorkflow does that
 * first: a total checked before could be placed as another), and what its live payments of this
 * plugin pay, net of refunds.
 */
export async function draftPaid(container: MedusaContainer, orderId: string): Promise<DraftPaid | undefined> {
  // Placed meanwhile (the admin route, another run): its tax lines are not the draft's to change.
  if (!(await isDraft(container, orderId))) return undefined;
  await updateOrderTaxLinesWorkflow(container).run({ input: { order_id: orderId } });
  const total = await draftTotal(container, orderId);
  if (total === undefined) return undefined;
  return { paid: await paidFor(container, orderId), total };
}

/**
 * Converts the draft orders whose live (not canceled) payments of a purchase-auth provider, net of
 * their refunds, pay their total (re-taxed) to the cent. Returns the orders converted. A draft they
 * do not pay is flagged for a person once (the payments' review_reason, and a WARN line). A failure
 * on one is logged and the others go on; the next run tries it again.
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
        const figures = await draftPaid(container, id);
        if (figures === undefined) continue;
        if (figures.paid !== figures.total) {
          if (await flagUnpaidDraft(container, id, figures))
            logger.warn(`purchase-auth: ${unpaidDraftText(id, figures)}`);
          continue;
        }
        const { kind, error } = await convertDraft(container, id);
        if (kind === "converted") {
          converted.push(id);
          logger.info(
            `purchase-auth: draft order ${id} holds the payment of its charge: converted into an order`,
          );
        } else if (kind === "failed") throw error;
      } catch (error) {
        logger.warn(
          `purchase-auth: draft order ${id} holds the payment of its charge and could not be converted (${(error as Error).message}); the next run tries again`,
        );
      }
    }
    if (drafts.length < pageSize) return converted;
    afterId = drafts[drafts.length - 1]!;
  }
}

/** Why a charged draft is not placed, and what a person does about it. */
export function unpaidDraftText(
  orderId: string,
  { paid, total }: DraftPaid,
  paymentId = "<payment id>",
): string {
  return `draft order ${orderId}: what was charged (${paid === undefined ? "nothing recorded yet" : formatCents(paid)}) does not pay its total (${formatCents(total)}); it changed after the charge, so it is not placed as paid. Cancel the payment (POST /admin/payments/${paymentId}/cancel; refund it first if it was captured), then charge the draft again.`;
}

/** Flags the draft's live payments of this plugin (review_reason), once; true when it wrote it. */
async function flagUnpaidDraft(
  container: MedusaContainer,
  orderId: string,
  figures: DraftPaid,
): Promise<boolean> {
  const reason = `The ${unpaidDraftText(orderId, figures)}`;
  const marker = `draft order ${orderId}:`;
  const { rows } = await knexOf(container).raw(
    `update payment p set data = coalesce(p.data, '{}'::jsonb) || jsonb_build_object('review_reason',
       case when coalesce(p.data->>'review_reason', '') = '' then ?::text
            else (p.data->>'review_reason') || E'\n\n' || ?::text end),
       updated_at = now()
     from order_payment_collection opc
     where opc.order_id = ? and opc.deleted_at is null and p.payment_collection_id = opc.payment_collection_id
       and p.deleted_at is null and p.canceled_at is null and p.provider_id like ?
       and strpos(coalesce(p.data->>'review_reason', ''), ?::text) = 0
     returning p.id`,
    [reason, reason, orderId, OURS, marker],
  );
  return rows.length > 0;
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
 * Draft orders (ids above `afterId`) holding a live payment of this plugin, not flagged as not paid
 * in full already: a person decides those (re-taxing them every run would rewrite their tax lines).
 */
async function chargedDrafts(container: MedusaContainer, afterId: string, limit: number): Promise<string[]> {
  const { rows } = await knexOf(container).raw(
    `select distinct o.id from "order" o
     join order_payment_collection opc on opc.order_id = o.id and opc.deleted_at is null
     join payment p on p.payment_collection_id = opc.payment_collection_id
       and p.deleted_at is null and p.canceled_at is null and p.provider_id like ?
     where o.is_draft_order = true and o.status = 'draft' and o.deleted_at is null and o.id > ?
       and strpos(coalesce(p.data->>'review_reason', ''), 'draft order ' || o.id || ':') = 0
     order by o.id limit ?`,
    [OURS, afterId, limit],
  );
  return (rows as Array<{ id: string }>).map((row) => row.id);
}

/** What the order's live payments of this plugin hold net of their refunds, in cents; undefined for none. */
async function paidFor(container: MedusaContainer, orderId: string): Promise<bigint | undefined> {
  const { rows } = await knexOf(container).raw(
    `select count(*)::int as payments,
       (coalesce(sum(p.amount), 0) - coalesce(sum((select sum(r.amount) from refund r
                                                   where r.payment_id = p.id and r.deleted_at is null)), 0))::text as paid
     from order_payment_collection opc
     join payment p on p.payment_collection_id = opc.payment_collection_id
       and p.deleted_at is null and p.canceled_at is null and p.provider_id like ?
     where opc.order_id = ? and opc.deleted_at is null`,
    [OURS, orderId],
  );
  const row = rows[0] as { payments: number; paid: string } | undefined;
  return row && row.payments > 0 ? toCentsRounded(row.paid) : undefined;
}
