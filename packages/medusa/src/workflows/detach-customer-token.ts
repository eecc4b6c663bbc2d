import type { AccountHolderDTO } from "@medusajs/framework/types";
import { createWorkflow, transform, WorkflowResponse, when } from "@medusajs/framework/workflows-sdk";
import { acquireLockStep, releaseLockStep, useQueryGraphStep } from "@medusajs/medusa/core-flows";
import { removeCustomerTokenStep } from "./steps/remove-customer-token";
import { resolvePurchaseAuthProviderStep } from "./steps/resolve-provider";

export interface DetachCustomerTokenInput {
  customer_id: string;
  customer_token: string;
  /** Only this provider's stored copy; omitted: wherever the customer's holders store the token. */
  provider_id?: string;
}

export const detachCustomerTokenWorkflowId = "purchase-auth-detach-customer-token";

/**
 * Removes one of a customer's stored tokens and cancels it at the service, so it can never be
 * charged again. The token is looked up in the customer's account holders of every purchase-auth
 * provider (the routes know only the token), or of `provider_id` when given. A token that is not
 * stored for this customer is NOT_FOUND.
 */
export const detachCustomerTokenWorkflow = createWorkflow(
  detachCustomerTokenWorkflowId,
  (input: DetachCustomerTokenInput) => {
    // A provider named must be an enabled purchase-auth one; none named needs no choosing.
    when("purchase-auth-detach-provider-named", { input }, ({ input }) => !!input.provider_id).then(() => {
      resolvePurchaseAuthProviderStep(
        transform({ input }, ({ input }) => ({ provider_id: input.provider_id })),
      );
    });
    const lockKey = transform({ input }, ({ input }) => `purchase-auth-customer-tokens:${input.customer_id}`);
    acquireLockStep({ key: lockKey, timeout: 10, ttl: 30 });
    const { data: customers } = useQueryGraphStep({
      entity: "customer",
      fields: ["id", "account_holders.*"],
      filters: { id: input.customer_id },
      options: { throwIfKeyNotFound: true },
    }).config({ name: "purchase-auth-get-customer-holders" });
    const removed = removeCustomerTokenStep(
      transform({ input, customers }, ({ input, customers }) => ({
        ...(input.provider_id ? { provider_id: input.provider_id } : {}),
        account_holders:
          (customers[0] as { account_holders?: Array<AccountHolderDTO | null> }).account_holders ?? [],
        customer_token: input.customer_token,
      })),
    );
    releaseLockStep({ key: lockKey });
    return new WorkflowResponse(removed);
  },
);
