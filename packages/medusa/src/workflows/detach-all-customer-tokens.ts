import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { readAccountHolderData } from "../providers/purchase-auth/stored-tokens";
import { accountHoldersOfCustomer } from "./lookups";

/**
 * Forgets every token stored for `customerId` (and with `cancelAtService`, cancels each at the
 * service first). Works after the customer is deleted: the account holders are found by the
 * customer id they were created for.
 */
export async function detachAllCustomerTokens(
  container: MedusaContainer,
  customerId: string,
  options: { cancelAtService: boolean },
): Promise<string[]> {
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const detached: string[] = [];
  for (const holder of await accountHoldersOfCustomer(container, customerId)) {
    const data = readAccountHolderData(holder.data);
    if (data.customer_tokens.length === 0) continue;
    if (options.cancelAtService) {
      const provider = purchaseAuthProvider(container, holder.provider_id);
      for (const token of data.customer_tokens) await provider.cancelToken(token.customer_token);
    }
    await payment.updateAccountHolder({
      id: holder.id,
      provider_id: holder.provider_id,
      context: {
        account_holder: {
          ...holder,
          data: { ...data, customer_tokens: [] },
        } as unknown as Parameters<
          IPaymentModuleService["updateAccountHolder"]
        >[0]["context"]["account_holder"],
      },
    });
    detached.push(...data.customer_tokens.map((token) => token.customer_token));
  }
  if (detached.length > 0) {
    logger.info(
      `purchase-auth: customer ${customerId} deleted: ${detached.length} stored token(s) detached${options.cancelAtService ? " and cancelled at the service" : ""}`,
    );
  }
  return detached;
}
