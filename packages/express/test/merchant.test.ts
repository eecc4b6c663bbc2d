import { idempotencyKeyFor } from "@purchase-auth/core";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type AppOptions,
  type Customer,
  call,
  charge,
  createShopData,
  type ShopApp,
  type ShopData,
  staffOnly,
  startShopApp,
} from "./support/shop.js";

// Manual capture, then the merchant routes: partial and full capture, refund, cancel; retries that
// must not capture or refund twice; and the default that nobody may call them.

let sandbox: SandboxServer;
const apps: ShopApp[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function shop(options: AppOptions = {}) {
  const data = createShopData(sandbox);
  const app = await startShopApp(data, { allowedCaptureModes: ["Manual"], ...options });
  apps.push(app);
  return { data, app };
}

/** A manual-capture charge of 2 × 24.90 + 1 × 89.00 = 138.80, authorized synchronously. */
async function authorizedCharge(data: ShopData, app: ShopApp): Promise<{ customer: Customer; id: string }> {
  const customer = data.customer();
  const cartId = data.cart(customer, [
    { sku: "beans-1kg", quantity: 2 },
    { sku: "grinder", quantity: 1 },
  ]);
  const reply = await charge(app, customer, { cartId, captureMode: "Manual" });
  expect(reply.json).toMatchObject({ status: "authorized", captureMode: "Manual" });
  return { customer, id: reply.json.authorizationId };
}

function orderOf(authorizationId: string) {
  return sandbox.orders({ authorizationId })[0]!;
}

describe("merchant routes", () => {
  it("capture part, capture the rest, refund part: exact amounts, state forward", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { customer, id } = await authorizedCharge(data, app);

    const part = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "38.80", sequence: 1 },
    });
    expect(part.status).toBe(200);
    expect(part.json).toMatchObject({
      authorizationId: id,
      status: "partially_captured",
      operation: { name: "capture", sequence: 1, outcome: "done" },
      order: { status: "PartActivated", totalAmount: "138.80", capturedAmount: "38.80" },
    });

    const rest = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      headers: { "content-type": "application/json" },
    });
    expect(rest.json).toMatchObject({
      status: "captured",
      operation: { sequence: 2, outcome: "done" },
      order: { status: "Activated", capturedAmount: "138.80" },
    });

    const refund = await call(app, "POST", `/charges/${id}/refund`, {
      merchant: true,
      body: { amount: 10.5, sequence: 1 },
    });
    expect(refund.json).toMatchObject({
      status: "partially_refunded",
      operation: { name: "refund", sequence: 1 },
      order: { status: "PartReturned", refundedAmount: "10.50" },
    });

    const reference = (await app.router.store.findByAuthorizationId(id))!.reference;
    expect(orderOf(id).operations.map((op) => [op.type, op.amount])).toEqual([
      ["capture", "38.80"],
      ["capture", "100.00"],
      ["refund", "10.50"],
    ]);
    const keys = sandbox
      .authorizations({ merchantId: data.merchant.merchantId })
      .map((authorization) => authorization.idempotencyKey);
    expect(keys).toEqual([
      idempotencyKeyFor(reference, customer.customerToken.toLowerCase(), "authorize", 1),
    ]);

    // The shopper sees the same state; webhooks that follow change nothing.
    await sandbox.settle();
    const status = await call(app, "GET", `/charges/${id}`, { customer });
    expect(status.json.status).toBe("partially_refunded");
  });

  it("a retried capture or refund (same sequence) does not capture or refund twice", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { id } = await authorizedCharge(data, app);

    const first = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "20.00", sequence: 1 },
    });
    const retry = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "20.00", sequence: 1 },
    });
    expect(first.json.order.capturedAmount).toBe("20.00");
    expect(retry.status).toBe(200);
    expect(retry.json.order.capturedAmount).toBe("20.00");
    expect(orderOf(id).capturedAmount).toBe("20.00");

    for (let i = 0; i < 2; i++) {
      const refund = await call(app, "POST", `/charges/${id}/refund`, {
        merchant: true,
        body: { amount: "5.00", sequence: 1 },
      });
      expect(refund.json.order.refundedAmount).toBe("5.00");
    }
    expect(orderOf(id).refundedAmount).toBe("5.00");
  });

  it("'already captured' or 'already cancelled' on a retry counts as success", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { id } = await authorizedCharge(data, app);
    const captured = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      headers: { "content-type": "application/json" },
    });
    expect(captured.json.status).toBe("captured");

    // A new sequence (the first answer was lost, the caller counted on): the service says
    // INVALID_ORDER_STATE, the order shows everything captured, so the capture is done.
    const again = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { sequence: 7 },
    });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ status: "captured", operation: { outcome: "already_done" } });
    expect(orderOf(id).capturedAmount).toBe("138.80");

    const other = await authorizedCharge(data, app);
    const cancel = await call(app, "POST", `/charges/${other.id}/cancel`, {
      merchant: true,
      headers: { "content-type": "application/json" },
    });
    expect(cancel.json).toMatchObject({ status: "cancelled", order: { status: "Cancelled" } });
    const cancelAgain = await call(app, "POST", `/charges/${other.id}/cancel`, {
      merchant: true,
      body: { sequence: 2 },
    });
    expect(cancelAgain.json).toMatchObject({ status: "cancelled", operation: { outcome: "already_done" } });
  });

  it("a partial capture or a refund the service refuses is never 'already done', even on a fully captured or returned order", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { id } = await authorizedCharge(data, app);
    const merchantPost = (path: string, body: unknown) =>
      call(app, "POST", `/charges/${id}/${path}`, { merchant: true, body });
    expect((await merchantPost("capture", { sequence: "all" })).json.order.status).toBe("Activated");

    // Everything is captured by another write: capturing 1.00 more moves nothing, and says so.
    const captureMore = await merchantPost("capture", { amount: "1.00", sequence: "one-more" });
    expect(captureMore.status).toBe(409);
    expect(captureMore.json.reason).toBe("INVALID_ORDER_STATE");
    expect(orderOf(id).operations.filter((operation) => operation.type === "capture")).toHaveLength(1);

    const refundAll = await merchantPost("refund", { amount: "138.80", sequence: "refund-all" });
    expect(refundAll.json).toMatchObject({ status: "refunded", operation: { outcome: "done" } });
    // Everything is returned: a further refund is refused, not answered as if it had been paid back.
    const refundMore = await merchantPost("refund", { amount: "5.00", sequence: "refund-more" });
    expect(refundMore.status).toBe(409);
    expect(refundMore.json.reason).toBe("INVALID_ORDER_STATE");
    expect(orderOf(id).refundedAmount).toBe("138.80");
    expect(orderOf(id).operations.filter((operation) => operation.type === "refund")).toHaveLength(1);
  });

  it("a write the order's state does not allow is a 409 problem with the reason", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { id } = await authorizedCharge(data, app);
    const tooMuch = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "500.00", sequence: 1 },
    });
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.json).toMatchObject({
      type: "urn:purchase-auth:problem:order-state",
      reason: "AMOUNT_EXCEEDS_REMAINING",
      detail: "The amount is more than what remains on this payment.",
    });
    const refundNothing = await call(app, "POST", `/charges/${id}/refund`, {
      merchant: true,
      body: { amount: "1.00", sequence: 1 },
    });
    expect(refundNothing.status).toBe(409);
    expect(refundNothing.json.reason).toBe("INVALID_ORDER_STATE");
    expect(orderOf(id).capturedAmount).toBe("0.00");
  });

  it("a refused capture moves the counter on: the next capture (next sequence) is not the stored refusal", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { id } = await authorizedCharge(data, app);
    // The back office renders the next sequence from the charge's counter, as the storefront does.
    const nextSequence = async () =>
      (await app.router.store.findByAuthorizationId(id))!.operations.capture + 1;
    const tooMuch = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "150.00", sequence: await nextSequence() },
    });
    expect(tooMuch.status).toBe(409);
    const valid = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "40.00", sequence: await nextSequence() },
    });
    expect(valid.status).toBe(200);
    expect(valid.json).toMatchObject({ status: "partially_captured", order: { capturedAmount: "40.00" } });
    expect(orderOf(id).capturedAmount).toBe("40.00");
  });

  it("refund, and capture with an amount, require a sequence (400 naming it); any id may be one", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { id } = await authorizedCharge(data, app);
    for (const [operation, body] of [
      ["capture", { amount: "10.00" }],
      ["refund", { amount: "10.00" }],
    ] as const) {
      const reply = await call(app, "POST", `/charges/${id}/${operation}`, { merchant: true, body });
      expect(reply.status).toBe(400);
      expect(reply.json.errors).toEqual([
        { field: "sequence", message: expect.stringContaining("sequence") },
      ]);
    }
    expect(orderOf(id).capturedAmount).toBe("0.00");
    // A back office's own id per button press; sent twice (the answer was lost), it captures once.
    const pressId = "6f1c1a4e-3b7a-4a38-9a3e-2f5b8d1c0e77";
    for (let i = 0; i < 2; i++) {
      const reply = await call(app, "POST", `/charges/${id}/capture`, {
        merchant: true,
        body: { amount: "10.00", sequence: pressId },
      });
      expect(reply.json).toMatchObject({ operation: { sequence: pressId } });
    }
    expect(orderOf(id).capturedAmount).toBe("10.00");
  });

  it("amounts must be exact: more than 2 decimals or a float artefact is a 400 naming amount", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { id } = await authorizedCharge(data, app);
    for (const amount of ["10.005", 0.1 + 0.2, "-1.00", "ten"]) {
      const reply = await call(app, "POST", `/charges/${id}/capture`, { merchant: true, body: { amount } });
      expect(reply.status).toBe(400);
      expect(reply.json.errors[0].field).toBe("amount");
    }
    const refundWithout = await call(app, "POST", `/charges/${id}/refund`, { merchant: true, body: {} });
    expect(refundWithout.status).toBe(400);
    expect(refundWithout.json.errors).toEqual([{ field: "amount", message: "amount is required" }]);
    expect(orderOf(id).capturedAmount).toBe("0.00");
  });

  it("is denied by default: without authorizeMerchant every merchant route answers 403", async () => {
    const { data, app } = await shop();
    const { customer, id } = await authorizedCharge(data, app);
    for (const operation of ["capture", "cancel", "refund"]) {
      for (const as of [{ merchant: true }, { customer }]) {
        const reply = await call(app, "POST", `/charges/${id}/${operation}`, {
          ...as,
          body: { amount: "1.00" },
        });
        expect(reply.status).toBe(403);
        expect(reply.json).toMatchObject({ type: "urn:purchase-auth:problem:forbidden", status: 403 });
      }
    }
    expect(orderOf(id)).toMatchObject({ status: "NotActivated", capturedAmount: "0.00" });
  });

  it("with authorizeMerchant, only the requests it allows get through; a shopper gets 403", async () => {
    const { data, app } = await shop({ authorizeMerchant: staffOnly });
    const { customer, id } = await authorizedCharge(data, app);
    const asShopper = await call(app, "POST", `/charges/${id}/capture`, {
      customer,
      headers: { "content-type": "application/json" },
    });
    expect(asShopper.status).toBe(403);
    const unknown = await call(app, "POST", "/charges/00000000-0000-4000-8000-000000000000/capture", {
      merchant: true,
      headers: { "content-type": "application/json" },
    });
    expect(unknown.status).toBe(404);
    expect(orderOf(id).status).toBe("NotActivated");
  });

  it("a charge without an order yet (still pending) has nothing to capture: 409", async () => {
    const { data, app } = await shop({
      authorizeMerchant: staffOnly,
      allowedTimings: ["scheduled"],
      schedules: { later: ["00.01:00:00"] },
    });
    const customer = data.customer();
    const reply = await charge(app, customer, {
      cartId: data.cart(customer),
      timing: "scheduled",
      schedule: "later",
    });
    const capture = await call(app, "POST", `/charges/${reply.json.authorizationId}/capture`, {
      merchant: true,
      headers: { "content-type": "application/json" },
    });
    expect(capture.status).toBe(409);
    expect(capture.json.type).toBe("urn:purchase-auth:problem:no-order");
  });
});
