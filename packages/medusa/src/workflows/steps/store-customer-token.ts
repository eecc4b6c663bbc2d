import type { AccountHolderDTO, PaymentCustomerDTO } from "@medusajs/framework/types";
import { Modules } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
import { purchaseAuthProvider } from "../../providers/purchase-auth/provider-instance";
import {
  readAccountHolderData,
  type StoredCustomerToken,
  withToken,
} from "../../providers/purchase-auth/stored-tokens";

export interface StoreCustomerTokenInput {
  provider_id: string;
  account_holder: AccountHolderDTO;
  customer: PaymentCustomerDTO;
  customer_token: string;
}

/**
 * The provider checks the token at the service (savePaymentMethod), then the account holder's data
 * gets the new list. Compensation puts the previous list back.
 */
export const storeCustomerTokenStep = createStep(
  "purchase-auth-store-customer-token",
  async (input: StoreCustomerTokenInput, { container }) => {
    const payment = container.resolve(Modules.PAYMENT);
    // The provider directly, not payment.createPaymentMethods: that merges errors into a plain Error
    // (HTTP 500), and the admin must get 404 for an unknown token and 400 naming a final status.
    const { customer_token, currency, added_at, status }: StoredCustomerToken = await purchaseAuthProvider(
      container,
      input.provider_id,
    ).checkTokenToStore(input.customer_token);
    const previous = input.account_holder.data ?? {};
    const next = withToken(readAccountHolderData(previous), {
      customer_token,
      currency,
      added_at,
      ...(status ? { status } : {}),
    });
    await payment.updateAccountHolder({
      id: input.account_holder.id,
      provider_id: input.provider_id,
      context: { account_holder: { ...input.account_holder, data: { ...next } } },
    });
    return new StepResponse(
      { customer_token, currency, added_at },
      { id: input.account_holder.id, provider_id: input.provider_id, account_holder: input.account_holder },
    );
  },
  async (compensation, { container }) => {
    if (!compensation) return;
    await container.resolve(Modules.PAYMENT).updateAccountHolder({
      id: compensation.id,
      provider_id: compensation.provider_id,
      context: { account_holder: compensation.account_holder },
    });
  },
);
