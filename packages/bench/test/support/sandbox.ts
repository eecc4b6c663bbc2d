import type { IncomingHttpHeaders } from "node:http";
import type { PurchaseAuthClientOptions } from "@purchase-auth/core";
import type { CreateCustomerTokenInput, SandboxServer } from "@purchase-auth/sandbox";
import { Agent, request } from "undici";
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
 * Idle connections closed after a second, well before node:http's 5-second keep-alive on the
 * sandbox's side: a connection the server closes while the client reuses it is an ECONNRESET that
 * says nothing about the sandbox (it failed this suite once on a loaded machine).
 */
const connections = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

/** One request exactly as given: no client logic between the test and the sandbox. */
export async function send(
  sandbox: SandboxServer,
  method: HttpMethod,
  path: string,
  options: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const response = await request(`${sandbox.url}${path}`, {
    dispatcher: connections,
    method,
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}
