import type { IncomingHttpHeaders } from "node:http";
import type { PurchaseAuthClientOptions } from "@purchase-auth/core";
import type { CreateCustomerTokenInput, SandboxServer } from "@purchase-auth/sandbox";
import { Client } from "undici";
import { fetchAccessToken, type ShopCredentials } from "../../bench/wire.js";

// Helpers shared by the reliability tests: a merchant of the sandbox and raw HTTP to it.

export interface Shop extends ShopCredentials {
  /** Another customer token of this merchant, with the given behaviour. */
  token(input?: Omit<CreateCustomerTokenInput, "merchantId">): string;
  clientOptions: Pick<PurchaseAuthClientOptions, "baseUrl" | "clientId" | "clientSecret" | "scope">;
}

export function openShop(sandbox: SandboxServer): Shop {
  const merchant = sandbox.createMerchant();
  const token = (input: Omit<CreateCustomerTokenInput, "merchantId"> = {}) =>
    sandbox.createCustomerToken({ merchantId: merchant.merchantId, ...input }).customerToken;
  return {
    baseUrl: sandbox.url,
    merchantId: merchant.merchantId,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    scope: merchant.scope,
    customerToken: token(),
    token,
    clientOptions: {
      baseUrl: sandbox.url,
      clientId: merchant.clientId,
      clientSecret: merchant.clientSecret,
      scope: merchant.scope,
    },
  };
}

export { fetchAccessToken };

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS";

/**
 * One request exactly as given, on a connection of its own: no client logic between the test and
 * the sandbox. A fresh connection per request means a reset can only come from the sandbox's
 * handling of this request; reusing idle connections, a loaded machine made the first request of a
 * test meet one the server had just closed (ECONNRESET that said nothing about the sandbox; it
 * failed this suite twice, once with a one-second idle timeout in place).
 */
export async function send(
  sandbox: SandboxServer,
  method: HttpMethod,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const connection = new Client(sandbox.url);
  try {
    const response = await connection.request({
      path,
      method,
      headers: options.headers ?? {},
      ...(options.body === undefined ? {} : { body: options.body }),
    });
    return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
  } finally {
    await connection.close();
  }
}
