import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BatchStore, chargeStoredToken } from "../src/index.js";
import { chargeItem, chargesByItem, openShop, type Shop, sandboxRecords } from "./support/sandbox.js";
import { STORES } from "./support/stores.js";

// chargeStoredToken: one charge with the batch engine's guarantees, one call at most per step.

describe.each(STORES)("chargeStoredToken with the $name store", ({ open }) => {
  let shop: Shop;
  let store: BatchStore;
  beforeAll(async () => {
    shop = await openShop();
    store = await open();
  });
  afterAll(() => shop.sandbox.close());

  it("charges once; calling again returns the record without a request", async () => {
    const item = chargeItem("draft-1", shop.token(), "12.34");
    const first = await chargeStoredToken({ client: shop.client, store, batchId: "drafts", item });
    expect(first).toMatchObject({ status: "charged", attempt: 1 });
    const requests = shop.sandbox.stats().requests;
    const again = await chargeStoredToken({ client: shop.client, store, batchId: "drafts", item });
    expect(again).toMatchObject({ status: "charged", attempt: 1, result: first.result });
    expect(shop.sandbox.stats().requests).toBe(requests);
    expect(chargesByItem(await sandboxRecords(shop)).get("draft-1")).toMatchObject({
      succeeded: 1,
      captures: 1,
      capturedCents: 1234n,
    });
  });

  it("moves a decline worth retrying to a new attempt with a new key, one step per call", async () => {
    const item = chargeItem("draft-2", shop.token({ failNextAttempts: ["PAYMENT_FAILED"] }));
    const options = {
      client: shop.client,
      store,
      batchId: "drafts",
      item,
      declinePolicy: { retryDelaysMs: [0] },
    };
    const first = await chargeStoredToken(options);
    expect(first).toMatchObject({ status: "retry_scheduled", reason: "PAYMENT_FAILED", attempt: 1 });
    const second = await chargeStoredToken(options);
    expect(second).toMatchObject({ status: "charged", attempt: 2 });
    expect(second.idempotencyKey).not.toBe(first.idempotencyKey);
    const keys = (await sandboxRecords(shop)).authorizations
      .filter((authorization) => authorization.reference === "draft-2")
      .map((authorization) => authorization.idempotencyKey);
    expect(keys).toEqual([first.idempotencyKey, second.idempotencyKey]);
  });

  it("refuses an item id reused for another charge, before any request", async () => {
    const requests = shop.sandbox.stats().requests;
    const other = chargeItem("draft-1", shop.token(), "99.00");
    await expect(
      chargeStoredToken({ client: shop.client, store, batchId: "drafts", item: other }),
    ).rejects.toThrow(/item draft-1 was registered before with another customer token or order/);
    expect(shop.sandbox.stats().requests).toBe(requests);
  });
});
