import { afterEach, describe, expect, it } from "vitest";
import { Simulator } from "../src/index.js";
import { accessTokenIn, authorizationBody } from "./helpers.js";

// The simulator without sockets: the same pipeline, answered through `handle`.

let simulator: Simulator | undefined;
afterEach(() => simulator?.dispose());

describe("Simulator.handle", () => {
  it("answers requests without HTTP", async () => {
    simulator = new Simulator({ demo: true });
    const demo = simulator.demo!;
    const accessToken = await accessTokenIn(simulator, demo.merchant);
    expect(accessToken).toMatch(/./); // the token endpoint answered 200 with a token

    const created = await simulator.handle({
      method: "POST",
      url: "/purchase/authorizations",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
      body: JSON.stringify(authorizationBody(demo.tokens.active.customerToken)),
    });
    expect(created).toMatchObject({ kind: "respond", status: 202 });
    await simulator.settle();
    expect(simulator.authorizations()[0]?.status).toBe("Succeeded");

    const tooLarge = await simulator.handle({
      method: "POST",
      url: "/purchase/authorizations",
      headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
      body: "x".repeat(1024 * 1024 + 1),
    });
    expect(tooLarge).toMatchObject({ kind: "respond", status: 413 });
  });
});
