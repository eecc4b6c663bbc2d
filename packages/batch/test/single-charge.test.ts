import { PurchaseAuthClient } from "@purchase-auth/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BatchStore, type ChargeStoredTokenOptions, chargeStoredToken } from "../src/index.js";
import {
  chargeItem,
  chargesByItem,
  clearFaults,
  injectFaults,
  openShop,
  type Shop,
  sandboxRecords,
} from "./support/sandbox.js";
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

  // It used to default `store` to a new MemoryBatchStore per call, so "call it again to move it on"
  // started the item again at attempt 1 with a new first-sent time: a scheduled retry replayed the
  // first attempt's stored decline for ever, and an unknown charge called again after the service
  // had forgotten its key (24 h) was charged a second time.
  it("refuses to run without a store, before any request", async () => {
    const requests = shop.sandbox.stats().requests;
    const item = chargeItem("no-store", shop.token());
    const withoutStore = {
      client: shop.client,
      batchId: "drafts",
      item,
    } as unknown as ChargeStoredTokenOptions;
    await expect(chargeStoredToken(withoutStore)).rejects.toThrow(
      /chargeStoredToken needs \{ store \}.*could charge twice/,
    );
    await expect(chargeStoredToken({ ...withoutStore, store: undefined! })).rejects.toThrow(TypeError);
    expect(shop.sandbox.stats().requests).toBe(requests);
    expect(chargesByItem(await sandboxRecords(shop)).get("no-store")).toBeUndefined();
  });

  // Last in this block: it moves the sandbox's clock a day on.
  it("an unknown charge called again after the service forgot its key ends needing review, charged once", async () => {
    let offsetMs = 0;
    const client = new PurchaseAuthClient({
      ...shop.credentials,
      maxRetries: 0,
      now: () => Date.now() + offsetMs,
    });
    const options = {
      client,
      store,
      batchId: "drafts",
      item: chargeItem("lost-then-forgotten", shop.token(), "40.00"),
      now: () => new Date(Date.now() + offsetMs),
    };
    await injectFaults(shop, [{ kind: "gateway_error", status: 502, phase: "after_commit", count: 1 }]);
    try {
      expect(await chargeStoredToken(options)).toMatchObject({ status: "unknown", attempt: 1 });
    } finally {
      await clearFaults(shop);
    }
    // 25 hours later, here and at the service, which has forgotten the key by now.
    offsetMs = 25 * 3_600_000;
    shop.sandbox.advanceClock(offsetMs);
    const requests = shop.sandbox.stats().requests;
    const later = await chargeStoredToken(options);
    expect(later).toMatchObject({ status: "needs_review", reason: "IDEMPOTENCY_WINDOW_PASSED", attempt: 1 });
    expect(shop.sandbox.stats().requests).toBe(requests);
    expect(chargesByItem(await sandboxRecords(shop)).get("lost-then-forgotten")).toMatchObject({
      succeeded: 1,
      capturedCents: 4000n,
    });
    await client.close();
  });
});
