import { idempotencyKeyFor, NotFoundError, PurchaseAuthClient } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { instantDispatcher } from "../bench/instant-dispatcher.js";
import { measureExpressBookkeeping } from "../bench/rows/express-bookkeeping.js";
import { authorizationBody } from "../bench/wire.js";

// Row 6's in-process figure is only worth printing if both sides make a whole charge: core's create
// through its token, request and answer parsing, and the adapter's route path up to a captured charge.

const CLIENT = {
  baseUrl: "http://instant.invalid",
  clientId: "bench",
  clientSecret: "bench-secret",
  scope: "bench/.default",
};
const TOKEN = "5b0c3f1e-8d4a-4c6e-9f2b-7a1d3e5c9b80";

describe("the instant dispatcher", () => {
  it("answers core's token and create requests as the sandbox does a synchronous create", async () => {
    const client = new PurchaseAuthClient({ ...CLIENT, dispatcher: instantDispatcher() });
    const request = authorizationBody(TOKEN);
    const result = await client.authorizations.create(request, {
      idempotencyKey: idempotencyKeyFor("bench-order", "authorize", 1),
    });
    expect(result.synchronous).toBe(true);
    expect(result.authorizationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.synchronous && result.orderId).toMatch(/^[0-9a-f-]{36}$/);
    await client.close();
  });

  it("answers anything else 404, which core reports as such", async () => {
    const client = new PurchaseAuthClient({ ...CLIENT, dispatcher: instantDispatcher() });
    const failure = await client.orders.get("0b7c1f3e-2d4a-4c6e-9f2b-7a1d3e5c9b81").catch((error) => error);
    expect(NotFoundError.isInstance(failure)).toBe(true);
    await client.close();
  });
});

describe("measureExpressBookkeeping", () => {
  it("measures every concurrency in every round, the adapter's charges captured", async () => {
    const cells = await measureExpressBookkeeping({
      concurrencies: [1, 4],
      rounds: 2,
      operations: 20,
      warmup: 5,
    });
    expect(cells.map((cell) => cell.concurrency)).toEqual([1, 4]);
    for (const cell of cells) {
      expect(cell.adapterMicros).toHaveLength(2);
      expect(cell.bareMicros).toHaveLength(2);
      expect(Math.min(...cell.adapterMicros, ...cell.bareMicros)).toBeGreaterThan(0);
      expect(cell.extraMicrosPerCharge).toBeCloseTo(
        cell.adapterMicrosPerCharge - cell.bareMicrosPerCharge,
        10,
      );
    }
  });
});
