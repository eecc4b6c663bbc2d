import type { SubscriberArgs, SubscriberConfig } from "@medusajs/framework";
import { detachAllCustomerTokens } from "../workflows/detach-all-customer-tokens";

/**
 * A deleted customer's stored tokens are forgotten, so nobody can charge them through Medusa; with
 * the plugin option `cancelTokensOnCustomerDelete: true` they are also cancelled at the service.
 */
export default async function purchaseAuthCustomerDeleted({
  event,
  container,
  pluginOptions,
}: SubscriberArgs<{ id: string }>) {
  await detachAllCustomerTokens(container, event.data.id, {
    cancelAtService:
      (pluginOptions as { cancelTokensOnCustomerDelete?: unknown } | undefined)
        ?.cancelTokensOnCustomerDelete === true,
  });
}

export const config: SubscriberConfig = {
  event: "customer.deleted",
  context: { subscriberId: "purchase-auth-customer-deleted" },
};
