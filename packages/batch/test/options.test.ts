import { afterAll, beforeAll, expect, it } from "vitest";
import { type ChargeItem, MemoryBatchStore, runBatch } from "../src/index.js";
import { chargeItem, openShop, type Shop } from "./support/sandbox.js";

// Bad options and bad items are refused with the name of what to fix, before any request.

let shop: Shop;
beforeAll(async () => {
  shop = await openShop();
});
afterAll(() => shop.sandbox.close());

it.each([
  ["batchId", { batchId: "" }, /batchId must be a string of 1 to 200 characters/],
  ["concurrency", { concurrency: 0 }, /concurrency must be at least 1/],
  ["ratePerSecond", { ratePerSecond: -5 }, /ratePerSecond must be a number above 0/],
  ["waitUpToMs", { waitUpToMs: Number.NaN }, /waitUpToMs must be a number ≥ 0/],
  [
    "retryDelaysMs",
    { declinePolicy: { retryDelaysMs: [1_000, -1] } },
    /declinePolicy\.retryDelaysMs must be/,
  ],
  ["client", { client: {} }, /client must be a PurchaseAuthClient/],
])("refuses a bad %s before any request", async (_name, override, message) => {
  const requests = shop.sandbox.stats().requests;
  const options = {
    client: shop.client,
    batchId: "options",
    items: [chargeItem("o-1", shop.token())],
    ...override,
  };
  await expect(runBatch(options as Parameters<typeof runBatch>[0])).rejects.toThrow(message);
  expect(shop.sandbox.stats().requests).toBe(requests);
});

it("refuses an item without a customer token or with a duplicate id, naming it", async () => {
  const requests = shop.sandbox.stats().requests;
  const token = shop.token();
  const noToken = { itemId: "x-1", order: chargeItem("x-1", token).order } as unknown as ChargeItem;
  await expect(
    runBatch({ client: shop.client, batchId: "items-1", items: [chargeItem("x-0", token), noToken] }),
  ).rejects.toThrow("item 1 (x-1): customerToken must be a non-empty string");
  await expect(
    runBatch({
      client: shop.client,
      batchId: "items-2",
      items: [chargeItem("dup", token), chargeItem("dup", token)],
    }),
  ).rejects.toThrow("item id dup appears twice in the input");
  expect(shop.sandbox.stats().requests).toBe(requests);
});

it("stores an item whose order breaks a rule as rejected, naming the field, and sends nothing for it", async () => {
  const store = new MemoryBatchStore();
  const bad = chargeItem("bad-vat", shop.token());
  bad.order.items[0]!.vat = "150";
  const result = await runBatch({
    client: shop.client,
    store,
    batchId: "rules",
    items: [bad, chargeItem("good", shop.token())],
  });
  expect(result).toMatchObject({
    total: 2,
    charged: 1,
    rejected: { total: 1, byReason: { INVALID_REQUEST: 1 } },
    sent: 1,
    complete: true,
  });
  const record = (await store.get("rules", "bad-vat"))!;
  expect(record).toMatchObject({ status: "rejected", attempt: 0 });
  expect(record.reason).toMatch(/^INVALID_REQUEST: order\.items\[0\]\.vat must be at most 100/);
});
