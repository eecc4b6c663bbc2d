import { PurchaseAuthClient } from "@purchase-auth/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BatchStore, chargeStoredToken } from "../src/index.js";
import { chargeItem, openShop, type Shop, sandboxRecords } from "./support/sandbox.js";
import { STORES } from "./support/stores.js";

// Two workers on one item (a duplicate pg-boss job, a resume while the first run is still out):
// the second resends the same key, meets "in progress" until it gives up, and stores "unknown".
// The first one's 200 arriving after that must still be recorded, not thrown away.

describe.each(STORES)("a duplicate worker, with the $name store", ({ open }) => {
  let shop: Shop;
  let store: BatchStore;
  beforeAll(async () => {
    shop = await openShop();
    store = await open();
  });
  afterAll(() => shop.sandbox.close());

  it("the first worker's late 200 is kept although the second stored unknown meanwhile", async () => {
    const item = chargeItem(`dup-${Math.random().toString(36).slice(2, 8)}`, shop.token(), "7.50");
    const batchId = "duplicates";
    // The first request holds the key for 800 ms before it is processed: a second one gets 409.
    shop.sandbox.injectFault({
      kind: "latency",
      latencyMs: 800,
      match: { method: "POST", path: "/purchase/authorizations" },
    });
    const first = chargeStoredToken({ client: shop.client, store, batchId, item });
    for (let waits = 0; (await store.get(batchId, item.itemId))?.status !== "sending"; waits++) {
      if (waits > 200) throw new Error("the first worker never wrote its record ahead");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const impatient = new PurchaseAuthClient({ ...shop.credentials, maxRetries: 0 });
    const second = await chargeStoredToken({ client: impatient, store, batchId, item });
    await impatient.close();
    expect(second.status).toBe("unknown");

    const settled = await first;
    expect(settled).toMatchObject({ status: "charged", result: { authorizationId: expect.any(String) } });
    expect(await store.get(batchId, item.itemId)).toMatchObject({ status: "charged" });
    const { authorizations } = await sandboxRecords(shop);
    const charged = authorizations.filter((authorization) => authorization.reference === item.itemId);
    expect(charged).toHaveLength(1);
    expect(charged[0]?.authorizationId).toBe(settled.result?.authorizationId);
  });
});
