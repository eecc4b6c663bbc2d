/** Medusa registers the provider as `pp_purchase-auth_<id>` (`pp_purchase-auth` without an id). */
export const PROVIDER_ID_BASE = "pp_purchase-auth";

/** True for a payment provider id of this plugin. */
export function isPurchaseAuthProviderId(id: string | null | undefined): boolean {
  return typeof id === "string" && (id === PROVIDER_ID_BASE || id.startsWith(`${PROVIDER_ID_BASE}_`));
}
