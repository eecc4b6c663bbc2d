import type { AccountHolderDTO } from "@medusajs/framework/types";
import { MedusaError, Modules } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
import { purchaseAuthProvider } from "../../providers/purchase-auth/provider-instance";
import { holdsToken, readAccountHolderData, withoutToken } from "../../providers/purchase-auth/stored-tokens";

export interface RemoveCustomerTokenInput {
  provider_id: string;
  /** The customer's account holder: only a token stored there can be removed. */
  account_holder: AccountHolderDTO | undefined;
  customer_token: string;
}

/** Cancels the token at the service (the provider's deletePaymentMethod), then forgets it. */
export const removeCustomerTokenStep = createStep(
  "purchase-auth-remove-customer-token",
  async (input: RemoveCustomerTokenInput, { container }) => {
    const holder = input.account_holder;
    const data = readAccountHolderData(holder?.data);
    if (!holder || !holdsToken(data, input.customer_token)) {
      throw new MedusaError(MedusaError.Types.NOT_FOUND, "This customer has no such stored customer token");
    }
    const payment = container.resolve(Modules.PAYMENT);
    // The provider directly: payment.deletePaymentMethods would turn its errors into an HTTP 500.
    await purchaseAuthProvider(container, input.provider_id).cancelToken(input.customer_token.toLowerCase());
    await payment.updateAccountHolder({
      id: holder.id,
      provider_id: input.provider_id,
      context: { account_holder: { ...holder, data: { ...withoutToken(data, input.customer_token) } } },
    });
    return new StepResponse({ customer_token: input.customer_token.toLowerCase() });
  },
);
