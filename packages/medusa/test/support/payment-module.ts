import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { AccountHolderDTO, IPaymentModuleService, PaymentCustomerDTO } from "@medusajs/framework/types";

/** The folder of the @medusajs/payment package, which Medusa's module test runner loads. */
export function paymentModuleFolder(): string {
  const require = createRequire(import.meta.url);
  return dirname(dirname(require.resolve("@medusajs/payment")));
}

/**
 * Creates a customer's account holder and stores a customer token in it, the way the plugin's attach workflow does: the provider
 * checks it (savePaymentMethod), then the account holder's data gets the new list.
 */
export async function storeCustomerToken(
  payment: IPaymentModuleService,
  providerId: string,
  customer: PaymentCustomerDTO,
  customerToken: string,
): Promise<AccountHolderDTO> {
  const holder = await payment.createAccountHolder({ provider_id: providerId, context: { customer } });
  const saved = await payment.createPaymentMethods({
    provider_id: providerId,
    data: { customer_token: customerToken },
    context: { account_holder: holder, customer },
  });
  const data = holder.data as { customer_tokens?: unknown[] };
  const { status: _status, ...entry } = saved.data as Record<string, unknown>;
  return await payment.updateAccountHolder({
    id: holder.id,
    provider_id: providerId,
    context: {
      account_holder: {
        ...holder,
        data: { ...data, customer_tokens: [...(data.customer_tokens ?? []), entry] },
      },
    },
  });
}
