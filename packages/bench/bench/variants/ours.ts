import { PurchaseAuthClient } from "@purchase-auth/core";
import { authorizationBody, type ShopCredentials } from "../wire.js";
import type { CreateVariant } from "./variant.js";

/**
 * Our client as an application uses it: validation, a fresh idempotency key, the cached token,
 * response parsing and error classification, all included in the measurement.
 */
export async function oursVariant(shop: ShopCredentials): Promise<CreateVariant> {
  const client = new PurchaseAuthClient({
    baseUrl: shop.baseUrl,
    clientId: shop.clientId,
    clientSecret: shop.clientSecret,
    scope: shop.scope,
  });
  const request = authorizationBody(shop.customerToken);
  return {
    name: "ours",
    create: async () => {
      const result = await client.authorizations.create(request);
      if (!result.synchronous) throw new Error("ours: expected a synchronous 200");
    },
    close: () => client.close(),
  };
}
