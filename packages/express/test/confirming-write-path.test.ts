import { randomBytes } from "node:crypto";
import {
  type AuthorizationRequest,
  DEFAULT_PATHS,
  OutcomeUnknownError,
  PurchaseAuthClient,
  type WriteOptions,
} from "@purchase-auth/core";
import { Agent, type Dispatcher } from "undici";
import { describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import { type AppOptions, createShopData, PRICES, startShopApp, useShops } from "./support/shop.js";

// A client may override the service's paths (a deployment behind a gateway that maps them). The
// "still confirming" OutcomeUnknownError of a charge whose send did nothing while another send of
// its key may have reached the service carries a `write` to resend: it must name the path this
// client sends creates to, or `client.resendUnknownWrite(error.write)` goes somewhere else.

const shops = useShops();

const CUSTOM_PATH = "/gateway/v2/authorizations";
const QUIET: AppOptions = { receiveWebhooks: false, reconcileIntervalMs: 0 };

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Holds each create call of `client` at a gate: `entered` once one is there, `release()` to let it go. */
function gateCreates(client: PurchaseAuthClient) {
  const entered = deferred();
  const gate = deferred();
  const create = client.authorizations.create.bind(client.authorizations);
  client.authorizations.create = async (request: AuthorizationRequest, options?: WriteOptions) => {
    entered.resolve();
    await gate.promise;
    return create(request, options);
  };
  return { entered: entered.promise, release: gate.resolve };
}

describe("the write of a still-confirming charge", () => {
  it("names the client's configured authorizations path, so resendUnknownWrite reaches the service", async () => {
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    const credentials = {
      baseUrl: sandbox.url,
      clientId: data.merchant.clientId,
      clientSecret: data.merchant.clientSecret,
      scope: data.merchant.scope,
      maxRetries: 1,
      retryBaseDelayMs: 5,
      retryMaxDelayMs: 10,
    };
    // The gateway in front of the service: it serves the custom path (and records what it saw).
    const seen: string[] = [];
    const gateway: Dispatcher = new Agent().compose((dispatch) => (options, handler) => {
      seen.push(String(options.path));
      const path = options.path === CUSTOM_PATH ? DEFAULT_PATHS.authorizations : options.path;
      return dispatch({ ...options, path }, handler);
    });
    const clientA = new PurchaseAuthClient({
      ...credentials,
      paths: { authorizations: CUSTOM_PATH },
      dispatcher: gateway,
    });
    const clientB = new PurchaseAuthClient(credentials);
    const gateA = gateCreates(clientA);
    const gateB = gateCreates(clientB);
    const store = new MemoryChargeStore();
    const a = await startShopApp(data, { ...QUIET, store, client: clientA });
    const b = await startShopApp(data, { ...QUIET, store, client: clientB });
    try {
      const customer = data.customer();
      const order = {
        reference: `renewal-${randomBytes(5).toString("hex")}`,
        currency: "EUR",
        items: [{ id: "beans-1kg", ...PRICES["beans-1kg"]!, quantity: 1 }],
      };
      const charging = a.router.charge({ customer, order }).catch((thrown: unknown) => thrown);
      await gateA.entered;
      // Instance B's reconciler counts its send of the same key before it goes out.
      const reconciling = b.router.reconcile();
      await gateB.entered;
      // A's send reaches nothing (its token endpoint is down): core says not sent.
      sandbox.injectFault({ kind: "token_endpoint_down", count: null });
      gateA.release();
      const error = await charging;
      sandbox.clearFaults();

      expect(OutcomeUnknownError.isInstance(error)).toBe(true);
      const unknown = error as OutcomeUnknownError;
      expect(unknown.write.path).toBe(CUSTOM_PATH);

      gateB.release();
      await reconciling;
      const [authorization] = sandbox.authorizations({ merchantId: data.merchant.merchantId });
      // The resend goes where this client sends creates and gets B's stored answer for the key.
      seen.length = 0;
      const resent = await clientA.resendUnknownWrite(unknown.write);
      expect(seen).toContain(CUSTOM_PATH);
      expect(resent).toMatchObject({
        operation: "authorizations.create",
        result: { authorizationId: authorization!.authorizationId },
      });
      expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
    } finally {
      gateA.release();
      gateB.release();
      sandbox.clearFaults();
      await Promise.all([a.close(), b.close()]);
      await Promise.all([clientA.close(), clientB.close(), gateway.close()]);
    }
  });
});
