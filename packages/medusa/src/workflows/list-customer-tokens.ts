import type { AccountHolderDTO, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { isPurchaseAuthProviderId } from "../providers/purchase-auth/provider-ids";
import { readAccountHolderData, type StoredCustomerToken } from "../providers/purchase-auth/stored-tokens";

/** A stored token as the API shows it. */
export interface CustomerTokenView extends StoredCustomerToken {
  provider_id: string;
}

/** The customer's stored tokens, of every purchase-auth provider (or of `providerId`). */
export async function listCustomerTokens(
  container: MedusaContainer,
  customerId: string,
  providerId?: string,
): Promise<CustomerTokenView[]> {
  const query = container.resolve(ContainerRegistrationKeys.QUERY);
  const { data } = await query.graph({
    entity: "customer",
    fields: ["id", "account_holders.*"],
    filters: { id: customerId },
  });
  const holders = ((data[0] as { account_holders?: Array<AccountHolderDTO | null> } | undefined)
    ?.account_holders ?? []) as Array<AccountHolderDTO | null>;
  return holders
    .filter((holder): holder is AccountHolderDTO => !!holder && isPurchaseAuthProviderId(holder.provider_id))
    .filter((holder) => providerId === undefined || holder.provider_id === providerId)
    .flatMap((holder) =>
      readAccountHolderData(holder.data).customer_tokens.map((token) => ({
        ...token,
        provider_id: holder.provider_id,
      })),
    );
}
