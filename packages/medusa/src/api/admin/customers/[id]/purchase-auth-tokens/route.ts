import type { AuthenticatedMedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { attachCustomerTokenWorkflow } from "../../../../../workflows/attach-customer-token";
import { listCustomerTokens } from "../../../../../workflows/list-customer-tokens";
import type { AttachCustomerTokenBodyType } from "../../../../validators";

/** A customer's stored customer tokens. */
export async function GET(req: AuthenticatedMedusaRequest, res: MedusaResponse): Promise<void> {
  res.json({ customer_tokens: await listCustomerTokens(req.scope, req.params.id!) });
}

/**
 * Attaches a customer token (from the customer's initial checkout) to the customer, after checking
 * it at the service. Admin only: a storefront cannot prove which customer a token belongs to.
 */
export async function POST(
  req: AuthenticatedMedusaRequest<AttachCustomerTokenBodyType>,
  res: MedusaResponse,
): Promise<void> {
  const { customer_token, provider_id } = req.validatedBody;
  const { result } = await attachCustomerTokenWorkflow(req.scope).run({
    input: { customer_id: req.params.id!, customer_token, ...(provider_id ? { provider_id } : {}) },
  });
  res.status(201).json({ customer_token: result });
}
