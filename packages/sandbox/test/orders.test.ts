import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { accessTokenFor, authorize, call, errorReasons, type Json, openShop, type Shop } from "./helpers.js";

// Supplement A: order retrieval, capture, cancel, refund, and the state rules.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

/** A manual-capture order of 120.50 EUR. */
async function manualOrder(): Promise<{ shop: Shop; orderId: string }> {
  const shop = await openShop(sandbox, { captureMode: "Manual", funds: "500.00" });
  const response = await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
  expect(response.status).toBe(200);
  return { shop, orderId: response.json.data.orderId };
}

function write(shop: Shop, orderId: string, action: string, body?: unknown) {
  return call(sandbox, "POST", `/manage/orders/${orderId}/${action}`, { token: shop.accessToken, body });
}

async function order(shop: Shop, orderId: string) {
  const response = await call(sandbox, "GET", `/manage/orders/${orderId}`, { token: shop.accessToken });
  expect(response.status).toBe(200);
  return response.json.data;
}

function orderEvents() {
  return sandbox
    .events()
    .map(({ event }) => event)
    .filter((event) => event.type.startsWith("order."))
    .map((event) => [event.type, (event.data as Json).amount, (event.data as Json).status]);
}

describe("orders", () => {
  it("GET returns the order resource with 2-decimal amounts", async () => {
    const { shop, orderId } = await manualOrder();
    expect(await order(shop, orderId)).toEqual({
      orderId,
      authorizationId: expect.any(String),
      customerToken: shop.customerToken,
      storeId: expect.any(String),
      reference: "order-1",
      currency: "EUR",
      status: "NotActivated",
      totalAmount: "120.50",
      capturedAmount: "0.00",
      refundedAmount: "0.00",
      cancelledAmount: "0.00",
      captureMode: "Manual",
      createdAt: expect.any(String),
      items: [{ id: "sku-1", description: "Coffee beans", unitPrice: "60.25", quantity: "2", vat: "25" }],
    });
  });

  it("capture: partial → PartActivated, the rest (no amount) → Activated, then 422 INVALID_ORDER_STATE", async () => {
    const { shop, orderId } = await manualOrder();
    const partial = await write(shop, orderId, "capture", { amount: "20.5", actionReference: "cap-1" });
    expect(partial.status).toBe(202);
    expect(partial.headers.location).toBe(`/manage/orders/${orderId}`);
    expect(partial.text).toBe("");
    expect(await order(shop, orderId)).toMatchObject({ status: "PartActivated", capturedAmount: "20.50" });

    expect((await write(shop, orderId, "capture")).status).toBe(202);
    expect(await order(shop, orderId)).toMatchObject({ status: "Activated", capturedAmount: "120.50" });

    const again = await write(shop, orderId, "capture", { amount: "1.00" });
    expect(again.status).toBe(422);
    expect(errorReasons(again)).toEqual(["INVALID_ORDER_STATE"]);
    expect(orderEvents()).toEqual([
      ["order.captured", "20.50", "PartActivated"],
      ["order.captured", "100.00", "Activated"],
    ]);
    expect(sandbox.orders()[0]?.operations[0]).toMatchObject({
      type: "capture",
      amount: "20.50",
      actionReference: "cap-1",
    });
  });

  it("capture more than the uncaptured remainder: 422 AMOUNT_EXCEEDS_REMAINING", async () => {
    const { shop, orderId } = await manualOrder();
    await write(shop, orderId, "capture", { amount: "100.00" });
    const over = await write(shop, orderId, "capture", { amount: "20.51" });
    expect(over.status).toBe(422);
    expect(errorReasons(over)).toEqual(["AMOUNT_EXCEEDS_REMAINING"]);
  });

  it("cancel NotActivated → Cancelled; nothing can be captured or refunded after", async () => {
    const { shop, orderId } = await manualOrder();
    expect((await write(shop, orderId, "cancel", { actionReference: "c-1" })).status).toBe(202);
    expect(await order(shop, orderId)).toMatchObject({ status: "Cancelled", cancelledAmount: "120.50" });
    expect(errorReasons(await write(shop, orderId, "capture"))).toEqual(["INVALID_ORDER_STATE"]);
    expect(errorReasons(await write(shop, orderId, "cancel"))).toEqual(["INVALID_ORDER_STATE"]);
    expect(errorReasons(await write(shop, orderId, "refund", { amount: "1.00" }))).toEqual([
      "INVALID_ORDER_STATE",
    ]);
    expect(orderEvents()).toEqual([["order.cancelled", "120.50", "Cancelled"]]);
    expect(sandbox.getCustomerToken(shop.customerToken).funds).toBe("500.00"); // released
  });

  it("cancel PartActivated releases the remainder and ends capturing → Activated", async () => {
    const { shop, orderId } = await manualOrder();
    await write(shop, orderId, "capture", { amount: "50.00" });
    expect((await write(shop, orderId, "cancel")).status).toBe(202);
    expect(await order(shop, orderId)).toMatchObject({
      status: "Activated",
      capturedAmount: "50.00",
      cancelledAmount: "70.50",
    });
  });

  it("refund: partial → PartReturned, the rest → Returned, over-refund 422 AMOUNT_EXCEEDS_REMAINING", async () => {
    const shop = await openShop(sandbox); // auto capture
    const created = await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
    const { orderId } = created.json.data;
    expect((await write(shop, orderId, "refund", { amount: "20.00", description: "damaged" })).status).toBe(
      202,
    );
    expect(await order(shop, orderId)).toMatchObject({ status: "PartReturned", refundedAmount: "20.00" });
    const over = await write(shop, orderId, "refund", { amount: "100.51" });
    expect(errorReasons(over)).toEqual(["AMOUNT_EXCEEDS_REMAINING"]);
    expect((await write(shop, orderId, "refund", { amount: "100.50" })).status).toBe(202);
    expect(await order(shop, orderId)).toMatchObject({ status: "Returned", refundedAmount: "120.50" });
    expect(errorReasons(await write(shop, orderId, "refund", { amount: "0.01" }))).toEqual([
      "INVALID_ORDER_STATE",
    ]);
    expect(orderEvents()).toEqual([
      ["order.captured", "120.50", "Activated"],
      ["order.refunded", "20.00", "PartReturned"],
      ["order.refunded", "100.50", "Returned"],
    ]);
  });

  it("refund while PartActivated is allowed; the status shows it once capturing ends", async () => {
    const { shop, orderId } = await manualOrder();
    await write(shop, orderId, "capture", { amount: "60.00" });
    expect((await write(shop, orderId, "refund", { amount: "10.00" })).status).toBe(202);
    expect(await order(shop, orderId)).toMatchObject({ status: "PartActivated", refundedAmount: "10.00" });
    await write(shop, orderId, "capture");
    expect(await order(shop, orderId)).toMatchObject({ status: "PartReturned", capturedAmount: "120.50" });
  });

  it("400 for invalid write bodies, with the shared rules", async () => {
    const { shop, orderId } = await manualOrder();
    const threeDecimals = await write(shop, orderId, "capture", { amount: "1.005" });
    expect(threeDecimals.json.error.errors).toEqual([
      expect.objectContaining({ field: "amount", rule: "decimals" }),
    ]);
    const zero = await write(shop, orderId, "capture", { amount: "0" });
    expect(zero.json.error.errors).toEqual([expect.objectContaining({ field: "amount", rule: "min" })]);
    const missing = await write(shop, orderId, "refund");
    expect(missing.json.error.errors).toEqual([
      expect.objectContaining({ field: "amount", rule: "required" }),
    ]);
    const number = await write(shop, orderId, "capture", { amount: 10 });
    expect(number.json.error.errors).toEqual([expect.objectContaining({ field: "amount", rule: "type" })]);
  });

  it("404 with empty errors for unknown, malformed or another merchant's order", async () => {
    const { orderId } = await manualOrder();
    const stranger = await openShop(sandbox);
    for (const path of [
      `/manage/orders/${orderId}`,
      "/manage/orders/00000000-0000-4000-8000-000000000000",
      "/manage/orders/not-an-id",
    ]) {
      const response = await call(sandbox, "GET", path, { token: stranger.accessToken });
      expect(response.status).toBe(404);
      expect(errorReasons(response)).toEqual([]);
    }
    const capture = await write(stranger, orderId, "capture");
    expect([capture.status, errorReasons(capture)]).toEqual([404, []]);
  });

  it("a manual order's uncaptured remainder expires (30 days by default) → Expired", async () => {
    const { shop, orderId } = await manualOrder();
    sandbox.advanceClock(30 * 24 * 3600_000);
    await sandbox.settle();
    const accessToken = await accessTokenFor(sandbox, shop.merchant); // the old one expired too
    const view = await order({ ...shop, accessToken }, orderId);
    expect(view).toMatchObject({ status: "Expired", cancelledAmount: "120.50" });
    expect(orderEvents()).toEqual([["order.cancelled", "120.50", "Expired"]]);
  });
});
