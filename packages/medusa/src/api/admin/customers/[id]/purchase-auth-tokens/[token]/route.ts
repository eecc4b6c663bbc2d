import type { AuthenticatedMedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { detachCustomerTokenWorkflow } from "../../../../../../workflows/detach-customer-token";

/** Removes a customer's stored token and cancels it at the service. */
export async function DELETE(req: AuthenticatedMedusaRequest, res: MedusaResponse): Promise<void> {
  const { result } = await detachCustomerTokenWorkflow(req.scope).run({
    input: { customer_id: req.params.id!, customer_token: req.params.token! },
  });
  res.json({ id: result.customer_token, object: "purchase_auth_customer_token", deleted: true });
}
