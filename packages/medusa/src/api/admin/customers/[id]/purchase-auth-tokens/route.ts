import type { AuthenticatedMedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { readCustomerTokensLive } from "../../../../../providers/purchase-auth/service-view";
import { attachCustomerTokenWorkflow } from "../../../../../workflows/attach-customer-token";
import { listCustomerTokens } from "../../../../../workflows/list-customer-tokens";
import type { AttachCustomerTokenBodyType } from "../../../../validators";

/**
 * A customer's stored customer tokens. With `?live=true` each also carries its status at the service
 * read now (`live_status`, or `live_error` when it could not be read): one call per token.
 */
export async function GET(req: AuthenticatedMedusaRequest, res: MedusaResponse): Promise<void> {
  const customerId = req.params.id!;
  const live = req.query.live === "true";
  res.json({
    customer_tokens: live
      ? await readCustomerTokensLive(req.scope, customerId)
      : await listCustomerTokens(req.scope, customerId),
  });
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
