import {
  type AuthorizationRequest,
  PurchaseAuthClient,
  type PurchaseAuthClientOptions,
  type WriteOptions,
} from "@purchase-auth/core";
import type { ShopData } from "./shop.js";

/** One create call as the router made it. */
export interface RecordedCreate {
  request: AuthorizationRequest;
  options: WriteOptions | undefined;
}

/**
 * A client from another copy of core (an app's own dependency), as the router sees it: not a
 * `PurchaseAuthClient` by `instanceof`, so its create calls are bounded by an abort signal. Each
 * create call is recorded, then sent to the sandbox by a real client of `data`'s merchant; close it
 * after the test.
 */
export function recordingClient(data: ShopData, options: Partial<PurchaseAuthClientOptions> = {}) {
  const { sandbox, merchant } = data;
  const real = new PurchaseAuthClient({
    baseUrl: sandbox.url,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    scope: merchant.scope,
    ...options,
  });
  const calls: RecordedCreate[] = [];
  const client = {
    authorizations: {
      create: (request: AuthorizationRequest, writeOptions?: WriteOptions) => {
        calls.push({ request, options: writeOptions });
        return real.authorizations.create(request, writeOptions);
      },
    },
    orders: real.orders,
    verifyWebhook: real.verifyWebhook.bind(real),
  } as unknown as PurchaseAuthClient;
  return { client, calls, close: () => real.close() };
}
