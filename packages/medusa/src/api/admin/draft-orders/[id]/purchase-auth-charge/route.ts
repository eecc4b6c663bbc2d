import type { AuthenticatedMedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { ContainerRegistrationKeys, MedusaError } from "@medusajs/framework/utils";
import { updateOrderTaxLinesWorkflow } from "@medusajs/medusa/core-flows";
import { toCentsRounded } from "../../../../../providers/purchase-auth/amounts";
import { chargeStoredTokenWorkflow } from "../../../../../workflows/charge-stored-token";
import type { StoredTokenChargeStatus } from "../../../../../workflows/charge-stored-token-result";
import { convertDraft, draftPaid, unpaidDraftText } from "../../../../../workflows/charged-drafts";
import type { ChargeDraftOrderBodyType } from "../../../../validators";

interface OrderRow {
  id: string;
  status: string;
  is_draft_order: boolean | null;
  customer_id: string | null;
  payment_collections?: Array<{ id: string } | null> | null;
}

const HTTP_STATUS: Record<StoredTokenChargeStatus, number> = {
  authorized: 200,
  captured: 200,
  pending: 202,
  // Medusa's own answer to a declined payment (PAYMENT_AUTHORIZATION_ERROR).
  declined: 422,
  // The service did not say: asking again is safe (same key), so "try again later".
  unknown: 503,
};

async function readOrder(req: AuthenticatedMedusaRequest, id: string): Promise<OrderRow> {
  const query = req.scope.resolve(ContainerRegistrationKeys.QUERY);
  const { data } = await query.graph({
    entity: "order",
    fields: ["id", "status", "is_draft_order", "customer_id", "payment_collections.id"],
    filters: { id },
  });
  const order = data[0] as OrderRow | undefined;
  if (!order) throw new MedusaError(MedusaError.Types.NOT_FOUND, `Draft order with id: ${id} was not found`);
  return order;
}

/**
 * "Charge the customer's saved payment method" for a draft order: charges the customer's stored
 * token (the default one, or `customer_token`) with the charge workflow, and once the service has
 * authorized (or accepted, 202) converts the draft into an order. A decline leaves the draft a
 * draft and answers 422 with the reason; a customer without a stored token is 400 and nothing is
 * sent. Calling it again never charges twice: it reports the first charge (and finishes the
 * conversion if that was interrupted); it also answers for the order the draft became.
 */
export async function POST(
  req: AuthenticatedMedusaRequest<ChargeDraftOrderBodyType>,
  res: MedusaResponse,
): Promise<void> {
  const id = req.params.id!;
  const { customer_token, provider_id, new_attempt } = req.validatedBody ?? {};
  const before = await readOrder(req, id);
  if (!before.customer_id) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      "This draft order has no customer: set its customer before charging a saved payment method.",
    );
  }
  if (before.is_draft_order && (before.payment_collections ?? []).length === 0) {
    // What converting does first, done before the amount is fixed: the charge equals the order's total.
    await updateOrderTaxLinesWorkflow(req.scope).run({ input: { order_id: id } });
  }
  const { result: charge } = await chargeStoredTokenWorkflow(req.scope).run({
    input: {
      order_id: id,
      ...(customer_token ? { customer_token } : {}),
      ...(provider_id ? { provider_id } : {}),
      ...(new_attempt ? { new_attempt } : {}),
    },
  });
  const charged =
    charge.status === "authorized" || charge.status === "captured" || charge.status === "pending";
  // Read again: the reconcile job may have converted it meanwhile (the charge workflow waits for
  // the job's run on the same order), and the draft may have been edited since its charge.
  const current = await readOrder(req, id);
  if (charged && current.is_draft_order) {
    const figures = await draftPaid(req.scope, id);
    if (figures !== undefined) {
      // A 202 has no payment yet: what was sent is the charge's amount.
      const paid = figures.paid ?? (charge.amount === null ? undefined : toCentsRounded(charge.amount));
      if (paid !== figures.total) {
        const after = await readOrder(req, id);
        res.status(409).json({
          message: `The ${unpaidDraftText(id, { ...figures, paid }, charge.payment_id ?? undefined)}`,
          charge,
          order: { id: after.id, status: after.status, is_draft_order: !!after.is_draft_order },
        });
        return;
      }
    }
    const { kind, error } = await convertDraft(req.scope, id);
    if (kind === "failed") throw error;
  }
  const after = await readOrder(req, id);
  res.status(HTTP_STATUS[charge.status]).json({
    ...(charge.status === "declined" || charge.status === "unknown" ? { message: charge.message } : {}),
    charge,
    order: { id: after.id, status: after.status, is_draft_order: !!after.is_draft_order },
  });
}
