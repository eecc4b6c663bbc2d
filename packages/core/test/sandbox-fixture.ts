import type { CreateCustomerTokenInput } from "@purchase-auth/sandbox";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import type { Dispatcher } from "undici";
import { PurchaseAuthClient, type PurchaseAuthClientOptions } from "../src/index.js";

/** One merchant of the sandbox with a client of ours and a customer token to charge. */
export interface Shop {
  client: PurchaseAuthClient;
  merchantId: string;
  clientId: string;
  clientSecret: string;
  customerToken: string;
  credentials: Pick<PurchaseAuthClientOptions, "baseUrl" | "clientId" | "clientSecret" | "scope">;
  /** Another customer token of this merchant, with the given behaviour. */
  token(input?: Omit<CreateCustomerTokenInput, "merchantId">): string;
}

/** Fast backoff so retry tests take milliseconds; the behaviour is the same. */
export const FAST_RETRIES = { retryBaseDelayMs: 2, retryMaxDelayMs: 10 } as const;

export function openShop(sandbox: SandboxServer, options: Partial<PurchaseAuthClientOptions> = {}): Shop {
  const merchant = sandbox.createMerchant();
  const credentials = {
    baseUrl: sandbox.url,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    scope: merchant.scope,
  };
  const client = new PurchaseAuthClient({ ...credentials, ...FAST_RETRIES, ...options });
  const token = (input: Omit<CreateCustomerTokenInput, "merchantId"> = {}) =>
    sandbox.createCustomerToken({ merchantId: merchant.merchantId, ...input }).customerToken;
  return {
    client,
    merchantId: merchant.merchantId,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    customerToken: token(),
    credentials,
    token,
  };
}

export function tokenRequestsOf(sandbox: SandboxServer, clientId: string): number {
  return sandbox.tokenRequests().filter((request) => request.clientId === clientId).length;
}

export { type Dispatcher, type SandboxServer, startSandbox };
