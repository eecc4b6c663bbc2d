import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { authorize, call, openShop } from "./helpers.js";

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 7 });
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

describe("faults", () => {
  it("reset_before_processing drops the connection and processes nothing", async () => {
    const shop = await openShop(sandbox);
    sandbox.injectFault({ kind: "reset_before_processing", match: { method: "post", path: "/purchase/" } });
    await expect(authorize(sandbox, shop)).rejects.toThrow();
    expect(sandbox.authorizations()).toEqual([]);
    expect((await authorize(sandbox, shop)).status).toBe(202);
  });

  it("match by method and path prefix; count says how often", async () => {
    const shop = await openShop(sandbox);
    const faultId = sandbox.injectFault({ kind: "unavailable", match: { method: "GET" }, count: 2 });
    expect(sandbox.faults()).toEqual([expect.objectContaining({ faultId, remaining: 2, fired: 0 })]);
    expect((await authorize(sandbox, shop)).status).toBe(202);
    const get = () =>
      call(sandbox, "GET", `/purchase/customer-tokens/${shop.customerToken}`, { token: shop.accessToken });
    expect([(await get()).status, (await get()).status, (await get()).status]).toEqual([503, 503, 200]);
    expect(sandbox.faults()).toEqual([]);
  });

  it("never touch the control routes", async () => {
    sandbox.injectFault({ kind: "unavailable", count: null });
    expect((await call(sandbox, "GET", "/sandbox/stats")).status).toBe(200);
    expect((await call(sandbox, "DELETE", "/sandbox/faults")).status).toBe(200);
    expect(sandbox.faults()).toEqual([]);
  });

  it("probabilities come from the seeded generator: the same run fails the same requests", async () => {
    async function run(): Promise<number[]> {
      sandbox.reset();
      const shop = await openShop(sandbox);
      sandbox.injectFault({
        kind: "unavailable",
        probability: 0.5,
        match: { path: "/purchase/customer-tokens" },
      });
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) {
        const response = await call(sandbox, "GET", `/purchase/customer-tokens/${shop.customerToken}`, {
          token: shop.accessToken,
        });
        statuses.push(response.status);
      }
      return statuses;
    }
    const first = await run();
    expect(first).toContain(503);
    expect(first).toContain(200);
    expect(await run()).toEqual(first);
  });
});
