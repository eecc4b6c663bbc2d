import { createWorkflow, transform, WorkflowResponse } from "@medusajs/framework/workflows-sdk";
import { acquireLockStep, releaseLockStep } from "@medusajs/medusa/core-flows";
import { authorizeStoredTokenChargeStep } from "./steps/authorize-stored-token-charge";
import { prepareStoredTokenChargeStep } from "./steps/prepare-stored-token-charge";
import { resolvePurchaseAuthProviderStep } from "./steps/resolve-provider";

export interface ChargeStoredTokenInput {
  /**
   * The Medusa order to charge (created server-side, e.g. by a scheduled job with
   * `createOrderWorkflow`, or a draft order). It is the charge's idempotency key: however often the
   * workflow runs for it, the order is charged at most once.
   */
  order_id: string;
  /**
   * One of the order customer's stored tokens; omitted: the customer's most recently stored token in
   * the order's currency that the service has not flagged.
   */
  customer_token?: string;
  /** `pp_purchase-auth_<id>`; omitted: the only purchase-auth provider configured. */
  provider_id?: string;
  /**
   * After a decline not worth retrying (e.g. PAYMENT_METHOD_NO_FUNDS) with the same token, the
   * workflow only reports the reason. Set this once the cause is fixed to make a new attempt (a new
   * payment session: new idempotency keys).
   */
  new_attempt?: boolean;
}

export const chargeStoredTokenWorkflowId = "purchase-auth-charge-stored-token";

/**
 * Charges a customer's stored token for an order created server-side: the merchant-initiated charge
 * of a subscription renewal, a re-order or an invoice run (Medusa's subscriptions recipe creates the
 * order in a scheduled job, then charges it). It goes through Medusa's payment module like a
 * checkout: a payment collection linked to the order, a payment session of the purchase-auth
 * provider, its authorization. So the provider's idempotency keys (from the session id), decline
 * handling, webhooks (a 202 finished later) and the reconcile job (unknown outcomes) apply as they
 * do for checkouts.
 *
 * One run per order at a time (a lock), and the order's payment records decide what a run does:
 * a second run reports the first charge instead of charging again, an unknown outcome is repeated
 * with its key, a decline worth retrying (PAYMENT_FAILED, SERVICE_UNAVAILABLE) becomes a new attempt
 * with a new key, and a decline not worth retrying stops with its reason. Declines and unknown
 * outcomes are results (`status`, `reason`, `retry`), not errors; errors are what prevents any
 * attempt: no such order, no customer, no stored token, nothing to pay.
 */
export const chargeStoredTokenWorkflow = createWorkflow(
  chargeStoredTokenWorkflowId,
  (input: ChargeStoredTokenInput) => {
    const providerId = resolvePurchaseAuthProviderStep(
      transform({ input }, ({ input }) => ({
        ...(input.provider_id ? { provider_id: input.provider_id } : {}),
      })),
    );
    const lockKey = transform({ input }, ({ input }) => `purchase-auth-charge-order:${input.order_id}`);
    acquireLockStep({ key: lockKey, timeout: 60, ttl: 120 });
    const plan = prepareStoredTokenChargeStep(
      transform({ input, providerId }, ({ input, providerId }) => ({
        order_id: input.order_id,
        provider_id: providerId,
        ...(input.customer_token ? { customer_token: input.customer_token } : {}),
        ...(input.new_attempt ? { new_attempt: true } : {}),
      })),
    );
    const charge = authorizeStoredTokenChargeStep(plan);
    releaseLockStep({ key: lockKey });
    return new WorkflowResponse(charge);
  },
);
