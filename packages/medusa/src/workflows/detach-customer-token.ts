import type { AccountHolderDTO } from "@medusajs/framework/types";
import { createWorkflow, transform, WorkflowResponse } from "@medusajs/framework/workflows-sdk";
import { acquireLockStep, releaseLockStep, useQueryGraphStep } from "@medusajs/medusa/core-flows";
import { removeCustomerTokenStep } from "./steps/remove-customer-token";
import { resolvePurchaseAuthProviderStep } from "./steps/resolve-provider";

export interface DetachCustomerTokenInput {
  customer_id: string;
  customer_token: string;
  provider_id?: string;
}

export const detachCustomerTokenWorkflowId = "purchase-auth-detach-customer-token";

/**
 * Removes one of a customer's stored tokens and cancels it at the service, so it can never be
 * charged again. A token that is not stored for this customer is NOT_FOUND.
 */
export const detachCustomerTokenWorkflow = createWorkflow(
  detachCustomerTokenWorkflowId,
  (input: DetachCustomerTokenInput) => {
    const providerId = resolvePurchaseAuthProviderStep(
      transform({ input }, ({ input }) => ({
        ...(input.provider_id ? { provider_id: input.provider_id } : {}),
      })),
    );
    const lockKey = transform({ input }, ({ input }) => `purchase-auth-customer-tokens:${input.customer_id}`);
    acquireLockStep({ key: lockKey, timeout: 10, ttl: 30 });
    const { data: customers } = useQueryGraphStep({
      entity: "customer",
      fields: ["id", "account_holders.*"],
      filters: { id: input.customer_id },
      options: { throwIfKeyNotFound: true },
    }).config({ name: "purchase-auth-get-customer-holders" });
    const removed = removeCustomerTokenStep(
      transform({ input, providerId, customers }, ({ input, providerId, customers }) => {
        const holders = (customers[0] as { account_holders?: Array<AccountHolderDTO | null> })
          .account_holders;
        return {
          provider_id: providerId,
          account_holder: (holders ?? []).find((holder) => holder?.provider_id === providerId) ?? undefined,
          customer_token: input.customer_token,
        };
      }),
    );
    releaseLockStep({ key: lockKey });
    return new WorkflowResponse(removed);
  },
);
