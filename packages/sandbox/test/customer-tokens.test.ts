import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { authorize, call, errorReasons, GUID, openShop } from "./helpers.js";

// Supplement B: get and cancel a customer token.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

describe("customer tokens", () => {
  it("GET returns the token", async () => {
    const shop = await openShop(sandbox, { captureMode: "Manual", storeId: "s-1", currency: "NOK" });
    const response = await call(sandbox, "GET", `/purchase/customer-tokens/${shop.customerToken}`, {
      token: shop.accessToken,
    });
    expect(response.status).toBe(200);
    expect(response.json).toEqual({
      id: expect.stringMatching(GUID),
      data: {
        customerToken: shop.customerToken,
        status: "Active",
        storeId: "s-1",
        currency: "NOK",
        captureMode: "Manual",
      },
    });
  });

  it("404 for another merchant's token", async () => {
    const shop = await openShop(sandbox);
    const stranger = await openShop(sandbox);
    const path = `/purchase/customer-tokens/${shop.customerToken}`;
    const get = await call(sandbox, "GET", path, { token: stranger.accessToken });
    const remove = await call(sandbox, "DELETE", path, { token: stranger.accessToken });
    for (const response of [get, remove])
      expect([response.status, errorReasons(response)]).toEqual([404, []]);
    expect(sandbox.getCustomerToken(shop.customerToken).status).toBe("Active");
  });

  it("DELETE cancels it (202 { id }); later authorizations get TOKEN_CANCELLED", async () => {
    const shop = await openShop(sandbox);
    const path = `/purchase/customer-tokens/${shop.customerToken}`;
    const response = await call(sandbox, "DELETE", path, { token: shop.accessToken });
    expect(response.status).toBe(202);
    expect(response.json).toEqual({ id: expect.stringMatching(GUID) });
    expect((await call(sandbox, "GET", path, { token: shop.accessToken })).json.data.status).toBe(
      "Cancelled",
    );
    expect((await call(sandbox, "DELETE", path, { token: shop.accessToken })).status).toBe(202);
    const authorization = await authorize(sandbox, shop);
    expect([authorization.status, errorReasons(authorization)]).toEqual([422, ["TOKEN_CANCELLED"]]);
    const changes = sandbox.events().filter(({ event }) => event.type === "customer-token.status-changed");
    expect(changes.map(({ event }) => event.data)).toEqual([
      { customerToken: shop.customerToken, status: "Cancelled", previousStatus: "Active" },
    ]);
  });

  it("status changes made through the control surface are announced too", async () => {
    const shop = await openShop(sandbox, { status: "Pending" });
    sandbox.setCustomerTokenStatus(shop.customerToken, "Active");
    expect(sandbox.events().map(({ event }) => event.data)).toEqual([
      { customerToken: shop.customerToken, status: "Active", previousStatus: "Pending" },
    ]);
    expect((await authorize(sandbox, shop)).status).toBe(202);
  });
});
