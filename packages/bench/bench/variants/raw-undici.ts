import { randomUUID } from "node:crypto";
import { Agent, request } from "undici";
import {
  assertAuthorized,
  authorizationBody,
  CREATE_PATH,
  createHeaders,
  fetchAccessToken,
  type ShopCredentials,
} from "../wire.js";
import { type CreateVariant, MAX_CONNECTIONS } from "./variant.js";

/**
 * The physical limit: undici's request with a body serialised once up front, a token fetched once,
 * and nothing else but a fresh idempotency key per request. No client can do less and stay safe.
 */
export async function rawUndiciVariant(shop: ShopCredentials): Promise<CreateVariant> {
  // The same pool settings as core's default dispatcher.
  const agent = new Agent({
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    connections: MAX_CONNECTIONS,
  });
  const accessToken = await fetchAccessToken(shop, agent);
  const url = new URL(CREATE_PATH, shop.baseUrl);
  const body = JSON.stringify(authorizationBody(shop.customerToken));
  return {
    name: "raw-undici",
    create: async () => {
      const response = await request(url, {
        dispatcher: agent,
        method: "POST",
        headers: createHeaders(accessToken, randomUUID()),
        body,
      });
      await response.body.text();
      assertAuthorized(response.statusCode, "raw-undici");
    },
    close: () => agent.close(),
  };
}
