import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import { call, charge, startShopApp, useShops } from "./support/shop.js";

// Every charge converges to the service's truth: after a lost answer, a restart, a shopper who
// comes back a day later, or a crash between a merchant write and its bookkeeping. Each case is
// checked against the sandbox's own records.

const shops = useShops();
const { shop, reconcilingShop } = shops;
const HOUR = 3_600_000;
// A test that fails half-way must not leave its faults to the next one.
afterEach(() => shops.sandbox().clearFaults());

describe("keys bind the order reference to the customer", () => {
  it("a reference another customer reuses after a restart is charged on their own token, never answered with someone else's charge", async () => {
    const { data, app } = await shop();
    const alice = data.customer();
    const bob = data.customer();
    // The README's old scheme: references from cart ids, which restart from 1.
    data.carts.set("cart-1", {
      customerId: alice.customerId,
      reference: "order-cart-1",
      currency: "EUR",
      lines: [{ sku: "beans-1kg", quantity: 1 }],
    });
    const first = await charge(app, alice, { cartId: "cart-1" });
    expect(first.json.status).toBe("captured");

    // The app restarts on a memory store (its charges are gone) and cart-1 now belongs to Bob.
    await app.close();
    const restarted = await startShopApp(data, { store: new MemoryChargeStore() });
    data.carts.set("cart-1", {
      customerId: bob.customerId,
      reference: "order-cart-1",
      currency: "EUR",
      lines: [{ sku: "grinder", quantity: 1 }],
    });
    const second = await charge(restarted, bob, { cartId: "cart-1" });
    await restarted.close();

    expect(second.status).toBe(201);
    expect(second.json.authorizationId).not.toBe(first.json.authorizationId);
    expect(second.json).toMatchObject({ status: "captured", amount: "89.00" });
    const authorizations = shops.sandbox().authorizations({ merchantId: data.merchant.merchantId });
    expect(authorizations.map((a) => [a.customerToken, a.amount]).sort()).toEqual(
      [
        [alice.customerToken, "24.90"],
        [bob.customerToken, "89.00"],
      ].sort(),
    );
  });
});

describe("unknown outcomes are resolved, or handed to a person, never charged twice", () => {
  /**
   * A shop with the reconciler off whose first charge lost its answer after the service took the
   * money: the shopper saw 503 "confirming" and the charge is pending for the same key.
   */
  async function chargeWithLostAnswer() {
    const { data, app } = await shop({
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      clientOptions: { maxRetries: 1 },
    });
    const customer = data.customer();
    const cartId = data.cart(customer);
    const reference = data.referenceOf(cartId);
    const sandbox = shops.sandbox();
    sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    const lost = await charge(app, customer, { cartId });
    sandbox.clearFaults();
    expect(lost.status).toBe(503);
    expect(lost.json.type).toBe("urn:purchase-auth:problem:payment-confirming");
    expect(await app.router.store.findByReference(reference)).toMatchObject({ status: "pending" });
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId }).map((a) => a.status)).toEqual([
      "Succeeded",
    ]);
    return { data, app, customer, cartId, reference, sandbox };
  }

  it("a lost answer is resolved by the reconciler with the same key, without the shopper", async () => {
    const { data, app, reference, sandbox } = await chargeWithLostAnswer();
    const report = await app.router.reconcile();
    expect(report).toMatchObject({ examined: 1, resolved: 1, needsReview: 0 });
    const [authorization] = sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(await app.router.store.findByReference(reference)).toMatchObject({
      status: "captured",
      authorizationId: authorization!.authorizationId,
    });
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("a resend while nothing reaches the service is still 'confirming', never 'nothing was charged'", async () => {
    const { data, app, customer, cartId, reference, sandbox } = await chargeWithLostAnswer();
    // The shopper comes back while the token endpoint is down: this request reaches nothing, but
    // the key it would resend may have taken effect (it had), so the outcome is still unknown.
    sandbox.injectFault({ kind: "revoke_access_token", count: null });
    sandbox.injectFault({ kind: "token_endpoint_down", count: null });
    const again = await charge(app, customer, { cartId });
    expect(again.json.type).toBe("urn:purchase-auth:problem:payment-confirming");
    // The reconciler's pass in the same outage resolves nothing and says so.
    const report = await app.router.reconcile();
    expect(report).toMatchObject({ examined: 1, resolved: 0, stillUnknown: 1 });
    sandbox.clearFaults();
    expect(await app.router.reconcile()).toMatchObject({ resolved: 1 });
    expect(await app.router.store.findByReference(reference)).toMatchObject({ status: "captured" });
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("leaves a charge that a request of this process is sending to that request", async () => {
    const { data, app } = await shop({ receiveWebhooks: false, reconcileIntervalMs: 0 });
    const customer = data.customer();
    const cartId = data.cart(customer);
    shops
      .sandbox()
      .injectFault({ kind: "latency", latencyMs: 500, match: { path: "/purchase/authorizations" } });
    const paying = charge(app, customer, { cartId });
    while ((await app.router.store.findByReference(data.referenceOf(cartId)))?.status !== "pending") {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const report = await app.router.reconcile();
    expect(report).toMatchObject({ examined: 0, resolved: 0 });
    expect((await paying).json).toMatchObject({ status: "captured" });
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("a shopper who comes back after the service forgot the key gets needs_review and an alert, not a second charge", async () => {
    let offset = 0;
    const alerts: PaymentAlert[] = [];
    const { data, app } = await shop({
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      clientOptions: { maxRetries: 1 },
      now: () => Date.now() + offset,
      onAlert: (alert) => {
        alerts.push(alert);
      },
    });
    const customer = data.customer();
    const cartId = data.cart(customer);
    shops
      .sandbox()
      .injectFault({ kind: "drop_after_commit", match: { path: "/purchase/authorizations" }, count: null });
    expect((await charge(app, customer, { cartId })).status).toBe(503);
    shops.sandbox().clearFaults();

    // A day later: the service has forgotten the key, so sending it again would charge again.
    offset = 25 * HOUR;
    shops.sandbox().advanceClock(25 * HOUR);
    const back = await charge(app, customer, { cartId });
    expect(back.status).toBe(200);
    expect(back.json.status).toBe("needs_review");
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
    expect(alerts).toEqual([
      expect.objectContaining({ kind: "needs_review", reference: data.referenceOf(cartId) }),
    ]);
    expect(JSON.stringify(app.errorLogs)).toContain("ALERT needs_review");
    // Asked again, the same answer: never sent, never alerted twice.
    expect((await charge(app, customer, { cartId })).json.status).toBe("needs_review");
    expect(alerts).toHaveLength(1);
    const status = await call(app, "GET", `/charges/by-reference-is-not-a-route`, { customer });
    expect(status.status).toBe(404);
  });

  it("webhook events parked before a crash are applied in the same change that records the authorization id", async () => {
    const store = new MemoryChargeStore();
    const { data, app } = await reconcilingShop(store);
    const customer = data.customer();
    const cartId = data.cart(customer, [{ sku: "beans-1kg", quantity: 1 }]);
    shops
      .sandbox()
      .injectFault({ kind: "drop_after_commit", match: { path: "/purchase/authorizations" }, count: null });
    expect((await charge(app, customer, { cartId, timing: "now" })).status).toBe(503);
    shops.sandbox().clearFaults();
    // The order events reached the app and were parked (stored, acknowledged) before it died.
    await shops.sandbox().settle();
    const events = shops
      .sandbox()
      .events()
      .filter(
        (emitted) =>
          emitted.merchantId === data.merchant.merchantId && emitted.event.type === "order.captured",
      );
    expect(events).toHaveLength(1);
    for (const { event } of events) {
      await store.recordEvent({
        id: event.id,
        authorizationId: (event.data as { authorizationId: string }).authorizationId,
        event,
        receivedAt: new Date().toISOString(),
      });
    }
    await app.close();

    // A new instance starts on the same store: its reconciler resolves the charge and the parked events.
    const restarted = await startShopApp(data, {
      store,
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      clientOptions: { maxRetries: 1 },
    });
    await restarted.router.reconcile();
    await restarted.close();
    const stored = await store.findByReference(data.referenceOf(cartId));
    expect(stored).toMatchObject({ status: "captured" });
    expect(await store.unappliedEvents(stored!.authorizationId!)).toEqual([]);
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });
});

describe("events a crash left stored but unapplied", () => {
  it("an authorized charge whose order.captured was stored and acknowledged, but not applied, is captured by the reconciler", async () => {
    const store = new MemoryChargeStore();
    const options = {
      store,
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      allowedTimings: ["asap" as const],
    };
    const { data, app } = await shop(options);
    const customer = data.customer();
    const cartId = data.cart(customer, [{ sku: "beans-1kg", quantity: 1 }]);
    expect((await charge(app, customer, { cartId, timing: "asap" })).status).toBe(201);
    await shops.sandbox().settle();
    const reference = data.referenceOf(cartId);
    const accepted = (await store.findByReference(reference))!;
    const eventsOf = (type: string) =>
      shops
        .sandbox()
        .events()
        .filter(
          (emitted) =>
            emitted.merchantId === data.merchant.merchantId &&
            emitted.event.type === type &&
            (emitted.event.data as { authorizationId?: string }).authorizationId === accepted.authorizationId,
        )
        .map((emitted) => emitted.event);
    const [succeeded] = eventsOf("authorization.succeeded");
    const [captured] = eventsOf("order.captured");
    // What a SIGKILL can leave: both events stored (and acknowledged, so never sent again), the
    // charge moved to authorized by the first, and the process gone before it applied the second.
    for (const event of [succeeded!, captured!]) {
      await store.recordEvent({
        id: event.id,
        authorizationId: accepted.authorizationId!,
        event,
        receivedAt: new Date().toISOString(),
      });
    }
    await store.compareAndSet(accepted.version, {
      ...accepted,
      status: "authorized",
      orderId: (succeeded!.data as { orderId: string }).orderId,
      version: accepted.version + 1,
    });
    await store.markEventApplied(succeeded!.id);
    await app.close();

    const restarted = await startShopApp(data, options);
    await restarted.router.reconcile();
    await restarted.close();
    expect(await store.findByReference(reference)).toMatchObject({ status: "captured" });
    expect(await store.unappliedEvents(accepted.authorizationId!)).toEqual([]);
  });
});

describe("merchant writes are recorded before they are sent", () => {
  async function manualCharge() {
    const { data, app } = await shop({
      authorizeMerchant: (req) => req.get("x-merchant-key") !== undefined,
      allowedCaptureModes: ["Manual"],
      clientOptions: { maxRetries: 1 },
    });
    const customer = data.customer();
    const cartId = data.cart(customer, [{ sku: "grinder", quantity: 2 }]);
    const reply = await charge(app, customer, { cartId, captureMode: "Manual" });
    expect(reply.json.status).toBe("authorized");
    return { data, app, id: reply.json.authorizationId as string };
  }

  it("capture the rest after a partial capture whose answer was lost captures the rest, not the part again", async () => {
    const { data, app, id } = await manualCharge();
    shops
      .sandbox()
      .injectFault({ kind: "drop_after_commit", match: { path: "/manage/orders" }, count: null });
    const lost = await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "50.00", sequence: 1 },
    });
    expect(lost.status).toBe(503);
    shops.sandbox().clearFaults();

    const rest = await call(app, "POST", `/charges/${id}/capture`, { merchant: true, body: {} });
    expect(rest.status).toBe(200);
    expect(rest.json.order).toMatchObject({ status: "Activated", capturedAmount: "178.00" });
    const [order] = shops.sandbox().orders({ merchantId: data.merchant.merchantId });
    expect(order!.operations.map((op) => [op.type, op.amount])).toEqual([
      ["capture", "50.00"],
      ["capture", "128.00"],
    ]);
  });

  it("a sequence reused with another amount is a 409, and a refused write does not block the next", async () => {
    const { data, app, id } = await manualCharge();
    expect((await call(app, "POST", `/charges/${id}/capture`, { merchant: true, body: {} })).status).toBe(
      200,
    );
    const refund = (amount: string, sequence: number) =>
      call(app, "POST", `/charges/${id}/refund`, { merchant: true, body: { amount, sequence } });
    expect((await refund("10.00", 1)).status).toBe(200);
    const reused = await refund("20.00", 1);
    expect(reused.status).toBe(409);
    expect(reused.json.type).toBe("urn:purchase-auth:problem:sequence-reused");
    // Too much: refused by the service; the next refund with the next number goes through.
    expect((await refund("500.00", 2)).status).toBe(409);
    const next = await refund("5.00", 3);
    expect(next.status).toBe(200);
    expect(next.json.order.refundedAmount).toBe("15.00");
    const [order] = shops.sandbox().orders({ merchantId: data.merchant.merchantId });
    expect(order!.operations.filter((op) => op.type === "refund").map((op) => op.amount)).toEqual([
      "10.00",
      "5.00",
    ]);
  });
});

describe("errors fit Express", () => {
  it("an error with a status (createError(404)) is answered with it; unknown paths under the mount are a problem 404", async () => {
    const { data, app } = await shop({
      buildOrder: () => {
        throw Object.assign(new Error("No such cart"), { status: 404, expose: true });
      },
    });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: "gone" });
    expect(reply.status).toBe(404);
    expect(reply.json).toMatchObject({ status: 404, detail: "No such cart" });
    const unknown = await call(app, "GET", `/nothing-here/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers["content-type"]).toMatch(/^application\/problem\+json/);
  });

  it("a garbage gzip or br body is a 4xx, not a 500, on charges and on webhooks", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    for (const encoding of ["gzip", "br", "deflate"]) {
      for (const path of ["/charges", "/webhooks"]) {
        const reply = await call(app, "POST", path, {
          customer,
          rawBody: Buffer.from("this is not compressed at all"),
          headers: { "content-type": "application/json", "content-encoding": encoding },
        });
        expect(reply.status, `${encoding} ${path}`).toBeGreaterThanOrEqual(400);
        expect(reply.status, `${encoding} ${path}`).toBeLessThan(500);
      }
    }
    expect(app.errorLogs).toEqual([]);
  });

  it("onError sees every 5xx with its request", async () => {
    const seen: string[] = [];
    const { data, app } = await shop({
      onError: (error, req) => {
        seen.push(`${req.method} ${String(error)}`);
      },
      buildOrder: () => ({ reference: "x".repeat(60), currency: "EUR", items: [] }),
    });
    const reply = await charge(app, data.customer(), { cartId: "any" });
    expect(reply.status).toBe(500);
    expect(seen).toEqual([expect.stringContaining("POST OrderBuildError")]);
  });
});
