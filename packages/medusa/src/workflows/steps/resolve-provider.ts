import { MedusaError, Modules } from "@medusajs/framework/utils";
import { createStep, StepResponse } from "@medusajs/framework/workflows-sdk";
import { isPurchaseAuthProviderId } from "../../providers/purchase-auth/provider-ids";

export interface ResolveProviderInput {
  /** A provider id (`pp_purchase-auth_<id>`); omitted: the only enabled purchase-auth provider. */
  provider_id?: string;
}

/** The purchase-auth payment provider to store tokens for. */
export const resolvePurchaseAuthProviderStep = createStep(
  "purchase-auth-resolve-provider",
  async (input: ResolveProviderInput, { container }) => {
    const payment = container.resolve(Modules.PAYMENT);
    const providers = await payment.listPaymentProviders({ is_enabled: true });
    const ids = providers.map((provider) => provider.id).filter(isPurchaseAuthProviderId);
    if (input.provider_id) {
      if (!ids.includes(input.provider_id)) {
        throw new MedusaError(
          MedusaError.Types.INVALID_DATA,
          `${input.provider_id} is not an enabled purchase-auth payment provider`,
        );
      }
      return new StepResponse(input.provider_id);
    }
    if (ids.length !== 1) {
      throw new MedusaError(
        MedusaError.Types.INVALID_DATA,
        ids.length === 0
          ? "No purchase-auth payment provider is configured"
          : `Several purchase-auth payment providers are configured (${ids.join(", ")}): pass provider_id`,
      );
    }
    return new StepResponse(ids[0]!);
  },
);
