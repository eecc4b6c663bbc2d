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

/** One capture, cancel or refund as the router sent it. */
export interface RecordedWrite {
  operation: "capture" | "cancel" | "refund";
  orderId: string;
  input: unknown;
  idempotencyKey: string | undefined;
}

/**
 * A client from another copy of core (an app's own dependency), as the router sees it: not a
 * `PurchaseAuthClient` by `instanceof`, so its create calls are bounded by an abort signal. Each
 * create call is recorded, then sent to the sandbox by a real client of `data`'s merchant; close it
 * after the test.
 */
export function recordingClient(
  data: ShopData,
  options: Partial<PurchaseAuthClientOptions> = {},
  /** Runs before each capture, cancel or refund is sent (after it is recorded): a test may hold it there. */
  beforeWrite?: (write: RecordedWrite) => Promise<void> | void,
) {
  const { sandbox, merchant } = data;
  const real = new PurchaseAuthClient({
    baseUrl: sandbox.url,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    scope: merchant.scope,
    ...options,
  });
  const calls: RecordedCreate[] = [];
  const writes: RecordedWrite[] = [];
  /** Records an order write, lets `beforeWrite` hold it, then sends it. */
  const recorded =
    (operation: RecordedWrite["operation"]) =>
    async (orderId: string, input: unknown, writeOptions?: WriteOptions) => {
      const write = { operation, orderId, input, idempotencyKey: writeOptions?.idempotencyKey };
      writes.push(write);
      await beforeWrite?.(write);
      return (real.orders[operation] as (...args: unknown[]) => Promise<unknown>)(
        orderId,
        input,
        writeOptions,
      );
    };
  const client = {
    authorizations: {
      create: (request: AuthorizationRequest, writeOptions?: WriteOptions) => {
        calls.push({ request, options: writeOptions });
        return real.authorizations.create(request, writeOptions);
      },
    },
    orders: {
      get: real.orders.get.bind(real.orders),
      capture: recorded("capture"),
      cancel: recorded("cancel"),
      refund: recorded("refund"),
    },
    verifyWebhook: real.verifyWebhook.bind(real),
  } as unknown as PurchaseAuthClient;
  return { client, calls, writes, close: () => real.close() };
}
