import type { AccountHolderDTO, PaymentCustomerDTO } from "@medusajs/framework/types";
import { isPresent, Modules } from "@medusajs/framework/utils";
import { transform, type WorkflowData, when } from "@medusajs/framework/workflows-sdk";
import {
  createPaymentAccountHolderStep,
  createRemoteLinkStep,
  useQueryGraphStep,
} from "@medusajs/medusa/core-flows";

interface CustomerWithHolders {
  id: string;
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  account_holders?: Array<AccountHolderDTO | null> | null;
}

/**
 * Inside a workflow: the customer and their account holder for the provider, created and linked to
 * the customer when missing (as Medusa's own payment-session workflow does).
 */
export function customerAccountHolder(input: WorkflowData<{ customer_id: string; provider_id: string }>) {
  const { data: customers } = useQueryGraphStep({
    entity: "customer",
    fields: ["id", "email", "first_name", "last_name", "account_holders.*"],
    filters: { id: input.customer_id },
    options: { throwIfKeyNotFound: true },
  }).config({ name: "purchase-auth-get-customer" });

  const found = transform({ customers, input }, ({ customers, input }) => {
    const customer = customers[0] as unknown as CustomerWithHolders;
    const existing = (customer.account_holders ?? []).find(
      (holder) => holder?.provider_id === input.provider_id,
    );
    const paymentCustomer: PaymentCustomerDTO = {
      id: customer.id,
      email: customer.email,
      first_name: customer.first_name ?? null,
      last_name: customer.last_name ?? null,
    };
    return { customer: paymentCustomer, existing: existing ?? undefined };
  });

  const accountHolder = createPaymentAccountHolderStep(
    transform({ found, input }, ({ found, input }) => ({
      provider_id: input.provider_id,
      // The payment module hands an existing account holder straight back.
      context: { customer: found.customer, ...(found.existing ? { account_holder: found.existing } : {}) },
    })),
  ).config({ name: "purchase-auth-account-holder" });

  when("purchase-auth-account-holder-created", { found, accountHolder }, ({ found, accountHolder }) => {
    return !isPresent(found.existing) && isPresent(accountHolder);
  }).then(() => {
    createRemoteLinkStep(
      transform({ found, accountHolder }, ({ found, accountHolder }) => [
        {
          [Modules.CUSTOMER]: { customer_id: found.customer.id },
          [Modules.PAYMENT]: { account_holder_id: accountHolder.id },
        },
      ]),
    ).config({ name: "purchase-auth-link-account-holder" });
  });

  return { customer: transform({ found }, ({ found }) => found.customer), accountHolder };
}
