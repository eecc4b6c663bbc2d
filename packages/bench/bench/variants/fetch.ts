import { randomUUID } from "node:crypto";
import {
  assertAuthorized,
  authorizationBody,
  CREATE_PATH,
  createHeaders,
  fetchAccessToken,
  type ShopCredentials,
} from "../wire.js";
import type { CreateVariant } from "./variant.js";

/**
 * What a hand-rolled client on the global fetch looks like: token fetched once, JSON built per
 * request, a key per request, the JSON answer parsed. No validation, no retries.
 */
export async function fetchVariant(shop: ShopCredentials): Promise<CreateVariant> {
  const accessToken = await fetchAccessToken(shop);
  const url = new URL(CREATE_PATH, shop.baseUrl);
  const request = authorizationBody(shop.customerToken);
  return {
    name: "fetch",
    create: async () => {
      const response = await fetch(url, {
        method: "POST",
        headers: createHeaders(accessToken, randomUUID()),
        body: JSON.stringify(request),
      });
      await response.json();
      assertAuthorized(response.status, "fetch");
    },
    close: async () => undefined, // the global dispatcher is shared; nothing of ours to close
  };
}
