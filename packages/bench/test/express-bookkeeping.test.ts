import { idempotencyKeyFor, NotFoundError, PurchaseAuthClient } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { instantDispatcher } from "../bench/instant-dispatcher.js";
import {
  INSTANT_CLIENT_OPTIONS as CLIENT,
  measureExpressBookkeeping,
  BOOKKEEPING_CUSTOMER_TOKEN as TOKEN,
} from "../bench/rows/express-bookkeeping.js";
import { authorizationBody } from "../bench/wire.js";

// Row 6's in-process figure is only worth printing if both sides make a whole charge: core's create
// through its token, request and answer parsing, and the adapter's route path up to a captured charge.

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
  // Each charge of either side throws unless it was answered at once (core: synchronous; the
  // adapter: captured), so a run that returns made every charge it counted.
  it("measures every concurrency in every round, both sides charging", async () => {
    const cells = await measureExpressBookkeeping({
      concurrencies: [1, 4],
      rounds: 3,
      operations: 20,
      warmup: 5,
      settle: 5,
    });
    expect(cells.map((cell) => cell.concurrency)).toEqual([1, 4]);
    for (const cell of cells) {
      expect(cell.adapterMicros).toHaveLength(3);
      expect(cell.bareMicros).toHaveLength(3);
      expect(cell.ratio.ratio).toBeCloseTo(cell.adapterMicrosPerCharge / cell.bareMicrosPerCharge, 10);
    }
  });

  it("gives every charge its own authorization id (the adapter's store refuses one twice)", async () => {
    const dispatcher = instantDispatcher();
    const client = new PurchaseAuthClient({ ...CLIENT, dispatcher });
    const ids = new Set<string>();
    for (let index = 0; index < 50; index++) {
      const result = await client.authorizations.create(authorizationBody(TOKEN), {
        idempotencyKey: idempotencyKeyFor(`unique-${index}`, "authorize", 1),
      });
      ids.add(result.authorizationId);
    }
    expect(ids.size).toBe(50);
    await client.close();
  });
});
