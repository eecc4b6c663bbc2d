import { randomUUID } from "node:crypto";
import { Agent } from "node:http";
import axios from "axios";
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
 * A hand-rolled client on axios (node:http underneath): token fetched once, axios serialises the
 * body per request, a key per request. No validation, no retries.
 */
export async function axiosVariant(shop: ShopCredentials): Promise<CreateVariant> {
  const accessToken = await fetchAccessToken(shop);
  const httpAgent = new Agent({ keepAlive: true, maxSockets: MAX_CONNECTIONS });
  const http = axios.create({ baseURL: shop.baseUrl, httpAgent });
  const request = authorizationBody(shop.customerToken);
  return {
    name: "axios",
    create: async () => {
      const response = await http.post(CREATE_PATH, request, {
        headers: createHeaders(accessToken, randomUUID()),
      });
      assertAuthorized(response.status, "axios");
    },
    close: async () => httpAgent.destroy(),
  };
}
