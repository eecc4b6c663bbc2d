import type { AccountHolderDTO } from "@medusajs/framework/types";
import { MedusaError, Modules } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
import { isPurchaseAuthProviderId } from "../../providers/purchase-auth/provider-ids";
import { purchaseAuthProvider } from "../../providers/purchase-auth/provider-instance";
import { holdsToken, readAccountHolderData, withoutToken } from "../../providers/purchase-auth/stored-tokens";

export interface RemoveCustomerTokenInput {
  /** Only this provider's account holder; omitted: whichever of the customer's holders stores it. */
  provider_id?: string;
  /** The customer's account holders: only a token stored in one of them can be removed. */
  account_holders: Array<AccountHolderDTO | null | undefined>;
  customer_token: string;
}

/**
 * Cancels the token at the service (each holding provider's deletePaymentMethod), then forgets it.
 * The token's own holders are found among the customer's, so a customer or admin need not know which
 * of several purchase-auth providers stored it.
 */
export const removeCustomerTokenStep = createStep(
  "purchase-auth-remove-customer-token",
  async (input: RemoveCustomerTokenInput, { container }) => {
    const token = input.customer_token.toLowerCase();
    const holders = input.account_holders.filter(
      (holder): holder is AccountHolderDTO =>
        !!holder &&
        isPurchaseAuthProviderId(holder.provider_id) &&
        (input.provider_id === undefined || holder.provider_id === input.provider_id) &&
        holdsToken(readAccountHolderData(holder.data), token),
    );
    if (holders.length === 0) {
      throw new MedusaError(MedusaError.Types.NOT_FOUND, "This customer has no such stored customer token");
    }
    const payment = container.resolve(Modules.PAYMENT);
    for (const holder of holders) {
      // The provider directly: payment.deletePaymentMethods would turn its errors into an HTTP 500.
      await purchaseAuthProvider(container, holder.provider_id).cancelToken(token);
      const data = readAccountHolderData(holder.data);
      await payment.updateAccountHolder({
        id: holder.id,
        provider_id: holder.provider_id,
        context: { account_holder: { ...holder, data: { ...withoutToken(data, token) } } },
      });
    }
    return new StepResponse({ customer_token: token });
  },
);
