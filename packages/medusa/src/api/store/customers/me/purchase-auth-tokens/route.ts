import type { AuthenticatedMedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { listCustomerTokens } from "../../../../../workflows/list-customer-tokens";

/** The logged-in customer's stored customer tokens (to let them choose, or remove one). */
export async function GET(req: AuthenticatedMedusaRequest, res: MedusaResponse): Promise<void> {
  const customerTokens = await listCustomerTokens(req.scope, req.auth_context.actor_id);
  res.json({ customer_tokens: customerTokens });
}
