import { describe, expect, it, vi } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import { InstanceView } from "./support/shared-store.js";
import { charge, createShopData, type ShopApp, startShopApp, useShops } from "./support/shop.js";

// Attempts of one order reference: a late answer for an earlier attempt must never reach a later
// one (reproduction of the review's race: two instances sharing one store, a double click).

const shops = useShops();

describe("attempts", () => {
  it("a late 422 for attempt 1 does not fail attempt 2, and the next POST does not charge again", async () => {
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    const store = new MemoryChargeStore(); // stands in for the shared PostgreSQL
    const errors: unknown[] = [];
    const logger = { error: (...args: unknown[]) => errors.push(args) };
    const apps: ShopApp[] = [];
    try {
      const x = await startShopApp(data, { store, logger });
      apps.push(x);
      const y = await startShopApp(data, {
        store,
        logger,
        receiveWebhooks: false,
        clientOptions: { retryBaseDelayMs: 400, retryMaxDelayMs: 400, maxRetries: 10 },
      });
      apps.push(y);
      const customer = data.customer({ failNextAttempts: ["PAYMENT_FAILED"] });
      const cartId = data.cart(customer, [{ sku: "grinder", quantity: 1 }]);

      sandbox.injectFault({
        kind: "latency",
        latencyMs: 300,
        match: { method: "POST", path: "/purchase/authorizations" },
        count: 1,
      });
      const click1 = charge(x, customer, { cartId });
      await new Promise((resolve) => setTimeout(resolve, 50));
      // A double click on the other instance: IN_PROGRESS at the service, retried by core.
      const click2 = charge(y, customer, { cartId });
      expect((await click1).status).toBe(422);

      // The shopper pays again: attempt 2, slower than instance Y's retries of attempt 1.
      sandbox.injectFault({
        kind: "latency",
        latencyMs: 1500,
        match: { method: "POST", path: "/purchase/authorizations" },
        count: 1,
      });
      const click3 = await charge(x, customer, { cartId });
      expect(click3.status).toBe(201);
      expect(click3.json.status).toBe("captured");
      await click2;
      await sandbox.settle();

      const stored = await store.findByReference(data.referenceOf(cartId));
      expect(stored).toMatchObject({ attempt: 2, status: "captured" });

      // Paid: a further POST answers the charge, it never starts attempt 3.
      const click4 = await charge(x, customer, { cartId });
      expect(click4.status).toBe(200);
      expect(click4.json.status).toBe("captured");
      const orders = sandbox.orders({}).filter((order) => order.reference === data.referenceOf(cartId));
      expect(orders).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });

  it("a 'pay again' that read the failed charge before another one paid attempt 2 sends nothing", async () => {
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    const store = new MemoryChargeStore(); // stands in for the shared PostgreSQL
    // Instance Y reads the store over a slow connection: its `create` answer is held until released.
    let holdNextCreate = false;
    let reached!: () => void;
    const yReadTheFailedCharge = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slowStore = new InstanceView(store, {
      afterCreate: async () => {
        if (!holdNextCreate) return;
        holdNextCreate = false;
        reached();
        await released;
      },
    });
    const apps: ShopApp[] = [];
    try {
      const x = await startShopApp(data, { store });
      apps.push(x);
      const y = await startShopApp(data, { store: slowStore, receiveWebhooks: false });
      apps.push(y);
      const customer = data.customer({ failNextAttempts: ["PAYMENT_FAILED"] });
      const cartId = data.cart(customer, [{ sku: "grinder", quantity: 1 }]);
      const reference = data.referenceOf(cartId);
      expect((await charge(x, customer, { cartId })).status).toBe(422);

      // "Pay again" twice (two tabs): Y reads the failed charge, X starts and pays attempt 2.
      holdNextCreate = true;
      const onY = charge(y, customer, { cartId });
      await yReadTheFailedCharge;
      const onX = await charge(x, customer, { cartId });
      expect(onX.json).toMatchObject({ status: "captured" });
      release();
      const yReply = await onY;

      // Y answers with attempt 2 as it is, and sends no create call of its own.
      expect(yReply.json).toMatchObject({ status: "captured", authorizationId: onX.json.authorizationId });
      await sandbox.settle();
      const succeeded = sandbox
        .authorizations({ merchantId: data.merchant.merchantId })
        .filter(
          (authorization) => authorization.reference === reference && authorization.status === "Succeeded",
        );
      expect(succeeded).toHaveLength(1);
      expect(sandbox.orders({ authorizationId: onX.json.authorizationId })).toHaveLength(1);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });

  it("a paid cart that gained items answers 409 order-changed, not the old charge", async () => {
    const { data, app } = await shops.shop();
    const customer = data.customer();
    const cartId = data.cart(customer);
    const paid = await charge(app, customer, { cartId });
    expect(paid.json).toMatchObject({ status: "captured", amount: "49.80" });
    data.carts.get(cartId)!.lines.push({ sku: "grinder", quantity: 1 });
    const changed = await charge(app, customer, { cartId });
    expect(changed.status).toBe(409);
    expect(changed.json).toMatchObject({
      type: "urn:purchase-auth:problem:order-changed",
      detail: "Your cart changed since you paid. Please review your order.",
    });
    // The unchanged order still answers its charge.
    data.carts.get(cartId)!.lines.pop();
    expect((await charge(app, customer, { cartId })).json).toMatchObject({ status: "captured" });
  });

  it("a resend after an unknown outcome with a changed cart answers 409 and authorizes nothing more", async () => {
    const { data, app } = await shops.shop({ timeoutMs: 100, receiveWebhooks: false });
    const sandbox = shops.sandbox();
    const customer = data.customer();
    const cartId = data.cart(customer);
    sandbox.injectFault({ kind: "latency", latencyMs: 400, match: { path: "/purchase/authorizations" } });
    expect((await charge(app, customer, { cartId })).status).toBe(503);
    await vi.waitFor(
      () => expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1),
      { timeout: 10_000 }, // the default second is too short on a loaded machine
    );
    sandbox.clearFaults();
    data.carts.get(cartId)!.lines[0]!.quantity = 5;
    const changed = await charge(app, customer, { cartId });
    expect(changed.status).toBe(409);
    expect(changed.json.type).toBe("urn:purchase-auth:problem:order-changed");
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
    expect(await app.router.store.findByReference(data.referenceOf(cartId))).toMatchObject({
      status: "pending",
      amount: "49.80",
    });
  });

  it("after a definite failure, a changed cart starts the next attempt for the new order", async () => {
    const { data, app } = await shops.shop();
    const customer = data.customer({ failNextAttempts: ["PAYMENT_FAILED"] });
    const cartId = data.cart(customer);
    expect((await charge(app, customer, { cartId })).status).toBe(422);
    data.carts.get(cartId)!.lines[0]!.quantity = 1;
    const retried = await charge(app, customer, { cartId });
    expect(retried.status).toBe(201);
    expect(retried.json).toMatchObject({ status: "captured", amount: "24.90" });
  });
});
