import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { CustomerTokenStore } from "../src/state/customer-tokens.js";
import { authorizationBody, authorize, openShop } from "./helpers.js";

// A service request is answered synchronously unless a latency fault makes it wait (the transport
// then writes without a promise per request). Both ways must keep the guarantees of `handle`: a bug
// in a route becomes a 500 envelope, never a dropped connection, and it releases the idempotency key
// so a retry runs again (supplement D: 5xx outcomes are not stored).

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());
afterEach(() => vi.restoreAllMocks());

const keyHeader = (key: string) => ({ "Service-Idempotency-Key": key });

/** The route's customer token lookup throws once, as a bug would. */
function breakTheRouteOnce(): void {
  vi.spyOn(CustomerTokenStore.prototype, "owned").mockImplementationOnce(() => {
    throw new Error("a bug in the route");
  });
  vi.spyOn(console, "error").mockImplementation(() => undefined); // the line on stderr
}

describe("a route that throws", () => {
  it.each([
    ["answered at once", false],
    ["answered after a latency fault", true],
  ])("%s: 500 envelope, the key released, and the retry runs", async (_, withLatency) => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    if (withLatency) sandbox.injectFault({ kind: "latency", latencyMs: 20, count: 1 });
    breakTheRouteOnce();
    const failed = await authorize(sandbox, shop, {}, keyHeader(key));
    expect(failed.status).toBe(500);
    expect(failed.json).toMatchObject({ error: { code: 500, errors: [] } });
    expect(sandbox.stats().idempotencyKeys).toBe(0);

    const retried = await authorize(sandbox, shop, {}, keyHeader(key));
    expect(retried.status).toBe(202);
    expect(sandbox.authorizations()).toHaveLength(1);
  });

  it("in process, handle() resolves to the same 500 envelope", async () => {
    const shop = await openShop(sandbox);
    breakTheRouteOnce();
    const outcome = await sandbox.handle({
      method: "POST",
      url: "/purchase/authorizations",
      headers: { authorization: `Bearer ${shop.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify(authorizationBody(shop.customerToken)),
    });
    expect(outcome).toMatchObject({ kind: "respond", status: 500 });
  });
});

describe("an answer that is ready at once", () => {
  it("is still the one a retry with the same key replays (same body, same id)", async () => {
    const shop = await openShop(sandbox);
    const key = randomUUID();
    const first = await authorize(sandbox, shop, {}, keyHeader(key));
    const again = await authorize(sandbox, shop, {}, keyHeader(key));
    expect(first.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(sandbox.authorizations()).toHaveLength(1);
  });
});
