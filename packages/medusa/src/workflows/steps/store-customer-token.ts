import type { AccountHolderDTO, PaymentCustomerDTO } from "@medusajs/framework/types";
import { Modules } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
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
    const saved = await payment.createPaymentMethods({
      provider_id: input.provider_id,
      data: { customer_token: input.customer_token },
      context: { account_holder: input.account_holder, customer: input.customer },
    });
    const { customer_token, currency, added_at } = saved.data as unknown as StoredCustomerToken;
    const previous = input.account_holder.data ?? {};
    const next = withToken(readAccountHolderData(previous), { customer_token, currency, added_at });
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
