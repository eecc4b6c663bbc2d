import type { MedusaContainer } from "@medusajs/framework/types";
import { MedusaError, Modules } from "@medusajs/framework/utils";
import { isPurchaseAuthProviderId } from "./provider-ids";
import type { PurchaseAuthProviderService } from "./service";

// The plugin's subscribers, job and routes run in the application's container; the provider lives
// in the payment module's. Medusa offers no public way to call a provider's own methods, so this
// reaches the instance the module registered through its provider service (an internal the peer
// range pins, like payment-module-records.ts).

interface ProviderRegistry {
  retrieveProvider(id: string): unknown;
}

/** The registered provider `providerId` (`pp_purchase-auth_<id>`). */
export function purchaseAuthProvider(
  container: MedusaContainer,
  providerId: string,
): PurchaseAuthProviderService {
  if (!isPurchaseAuthProviderId(providerId)) {
    throw new MedusaError(
      MedusaError.Types.INVALID_DATA,
      `${providerId} is not a purchase-auth payment provider`,
    );
  }
  const payment = container.resolve(Modules.PAYMENT) as unknown as {
    paymentProviderService_?: ProviderRegistry;
  };
  const registry = payment.paymentProviderService_;
  if (!registry) {
    throw new Error(
      "purchase-auth: the payment module has no paymentProviderService_; this Medusa version is not supported",
    );
  }
  return registry.retrieveProvider(providerId) as PurchaseAuthProviderService;
}

/** Medusa's provider id of a webhook's `provider` (`purchase-auth_<id>` → `pp_purchase-auth_<id>`). */
export function providerIdOfWebhook(provider: string): string | undefined {
  const id = `pp_${provider}`;
  return isPurchaseAuthProviderId(id) ? id : undefined;
}
