import { createWorkflow, transform, WorkflowResponse } from "@medusajs/framework/workflows-sdk";
import { acquireLockStep, releaseLockStep } from "@medusajs/medusa/core-flows";
import { customerAccountHolder } from "./customer-account-holder";
import { ensureTokenUnclaimedStep } from "./steps/ensure-token-unclaimed";
import { resolvePurchaseAuthProviderStep } from "./steps/resolve-provider";
import { storeCustomerTokenStep } from "./steps/store-customer-token";

export interface AttachCustomerTokenInput {
  customer_id: string;
  /** The customer token (a GUID) from the customer's initial checkout with the service. */
  customer_token: string;
  /** `pp_purchase-auth_<id>`; omitted: the only purchase-auth provider configured. */
  provider_id?: string;
}

export const attachCustomerTokenWorkflowId = "purchase-auth-attach-customer-token";

/**
 * Stores a customer token for a customer after checking it at the service (it must be this
 * merchant's and not Denied, Revoked or Cancelled). Run it from trusted server code only (the admin
 * route, your backend's handler of the initial checkout): the token is taken as this customer's.
 */
export const attachCustomerTokenWorkflow = createWorkflow(
  attachCustomerTokenWorkflowId,
  (input: AttachCustomerTokenInput) => {
    const providerId = resolvePurchaseAuthProviderStep(
      transform({ input }, ({ input }) => ({
        ...(input.provider_id ? { provider_id: input.provider_id } : {}),
      })),
    );
    // One lock for the customer's list, one for the token (it may be attached to one customer only).
    const lockKeys = transform({ input }, ({ input }) => [
      `purchase-auth-customer-tokens:${input.customer_id}`,
      `purchase-auth-customer-token:${input.customer_token.toLowerCase()}`,
    ]);
    acquireLockStep({ key: lockKeys, timeout: 10, ttl: 30 });
    ensureTokenUnclaimedStep(
      transform({ input }, ({ input }) => ({
        customer_id: input.customer_id,
        customer_token: input.customer_token,
      })),
    );
    const { customer, accountHolder } = customerAccountHolder(
      transform({ input, providerId }, ({ input, providerId }) => ({
        customer_id: input.customer_id,
        provider_id: providerId,
      })),
    );
    const stored = storeCustomerTokenStep(
      transform({ input, providerId, customer, accountHolder }, (data) => ({
        provider_id: data.providerId,
        account_holder: data.accountHolder,
        customer: data.customer,
        customer_token: data.input.customer_token,
      })),
    );
    releaseLockStep({ key: lockKeys });
    return new WorkflowResponse(stored);
  },
);
