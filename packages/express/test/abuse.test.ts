import { type AuthorizationRequest, PurchaseAuthClient, type WriteOptions } from "@purchase-auth/core";
import { describe, expect, it, vi } from "vitest";
import { call, charge, createShopData, startShopApp, useShops } from "./support/shop.js";

// What a browser (or someone pretending to be one) may try: choose the token, change the price,
// read or pay someone else's charge, send too much, send too often.

const shops = useShops();
const { shop } = shops;

describe("the browser cannot choose who pays or what is charged", () => {
  it("a customer token, a price or an amount in the body is refused by name; nothing is charged", async () => {
    const { data, app } = await shop();
    const alice = data.customer();
    const mallory = data.customer();
    const cartId = data.cart(mallory);
    const attempts = [
      { cartId, customerToken: alice.customerToken },
      {
        cartId,
        items: [{ id: "grinder", description: "Burr grinder", unitPrice: "0.01", quantity: 1, vat: 0 }],
      },
      { cartId, amount: "0.01", currency: "EUR" },
      { cartId, unitPrice: "0.01" },
    ];
    for (const body of attempts) {
      const reply = await charge(app, mallory, body);
      expect(reply.status).toBe(400);
      const extra = Object.keys(body).filter((key) => key !== "cartId");
      expect(reply.json.errors).toEqual(
        extra.map((field) => ({ field, message: `${field} is not accepted here` })),
      );
    }
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toEqual([]);

    // The same cart, asked for properly, is charged at the price list's price, on Mallory's token.
    const honest = await charge(app, mallory, { cartId });
    expect(honest.json).toMatchObject({ status: "captured", amount: "49.80" });
    const [authorization] = shops.sandbox().authorizations({ merchantId: data.merchant.merchantId });
    expect(authorization).toMatchObject({ amount: "49.80", customerToken: mallory.customerToken });
  });

  it("capture mode and timing are the app's unless it allows the browser to choose", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const cartId = data.cart(customer);
    const manual = await charge(app, customer, { cartId, captureMode: "Manual" });
    expect(manual.status).toBe(400);
    expect(manual.json.errors).toEqual([
      { field: "captureMode", message: "captureMode must be one of Auto" },
    ]);
    const later = await charge(app, customer, { cartId, timing: "scheduled", schedule: "whenever" });
    expect(later.status).toBe(400);
    expect(later.json.errors[0].field).toBe("timing");
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toEqual([]);
  });

  it("a missing or malformed cartId is a 400 naming it", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    expect((await charge(app, customer, {})).json.errors).toEqual([
      { field: "cartId", message: "cartId is required" },
    ]);
    expect((await charge(app, customer, { cartId: 42 })).json.errors[0].field).toBe("cartId");
    const array = await call(app, "POST", "/charges", { customer, body: [{ cartId: "x" }] });
    expect(array.status).toBe(400);
  });
});

describe("one customer cannot reach another's charges", () => {
  it("without a session: 401 on every customer route", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const paid = await charge(app, customer, { cartId: data.cart(customer) });
    const id = paid.json.authorizationId;
    for (const [method, path] of [
      ["POST", "/charges"],
      ["GET", `/charges/${id}`],
      ["GET", `/charges/${id}/events`],
    ] as const) {
      const reply = await call(app, method, path, method === "POST" ? { body: { cartId: "x" } } : {});
      expect(reply.status).toBe(401);
      expect(reply.json).toMatchObject({ type: "urn:purchase-auth:problem:unauthenticated", status: 401 });
    }
  });

  it("reading someone else's charge is a 404, exactly like a charge that does not exist", async () => {
    const { data, app } = await shop();
    const alice = data.customer();
    const bob = data.customer();
    const paid = await charge(app, alice, { cartId: data.cart(alice) });
    const id = paid.json.authorizationId;

    const bobReads = await call(app, "GET", `/charges/${id}`, { customer: bob });
    const missing = await call(app, "GET", "/charges/6f1c2b9e-4a3d-4e5f-8a7b-9c0d1e2f3a4b", {
      customer: bob,
    });
    const notAnId = await call(app, "GET", "/charges/..%2F..%2Fadmin", { customer: bob });
    expect(bobReads.status).toBe(404);
    expect(bobReads.json).toEqual(missing.json);
    expect(notAnId.status).toBe(404);
    expect((await call(app, "GET", `/charges/${id}/events`, { customer: bob })).status).toBe(404);
    expect((await call(app, "GET", `/charges/${id}`, { customer: alice })).status).toBe(200);
  });

  it("paying someone else's cart is refused by the app's buildOrder; their token is never used", async () => {
    const { data, app } = await shop();
    const alice = data.customer();
    const bob = data.customer();
    const reply = await charge(app, bob, { cartId: data.cart(alice) });
    expect(reply.status).toBe(404);
    expect(reply.json).toEqual({
      type: "about:blank",
      title: "Cart not found",
      status: 404,
      detail: "This cart does not exist.",
    });
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toEqual([]);
  });

  it("an order reference the app built for another customer cannot be paid twice over (409)", async () => {
    const { data, app } = await shop();
    const alice = data.customer();
    const bob = data.customer();
    const cartId = data.cart(alice);
    await charge(app, alice, { cartId });
    // A buggy app hands Bob Alice's cart: the charge for that reference stays Alice's.
    data.carts.get(cartId)!.customerId = bob.customerId;
    const reply = await charge(app, bob, { cartId });
    expect(reply.status).toBe(409);
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });
});

describe("limits", () => {
  it("a body larger than maxBodyBytes is 413 on the charge route and on the webhook route", async () => {
    const { data, app } = await shop({ maxBodyBytes: 2048 });
    const customer = data.customer();
    const big = { cartId: "x".repeat(4096) };
    const charged = await charge(app, customer, big);
    expect(charged.status).toBe(413);
    expect(charged.json).toMatchObject({ type: "urn:purchase-auth:problem:payload-too-large", status: 413 });
    const webhook = await call(app, "POST", "/webhooks", {
      rawBody: JSON.stringify({ padding: "x".repeat(4096) }),
      headers: { "content-type": "application/json" },
    });
    expect(webhook.status).toBe(413);
  });

  it("a body that is not JSON is 415, and broken JSON is 400", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const form = await call(app, "POST", "/charges", {
      customer,
      rawBody: "cartId=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(415);
    const broken = await call(app, "POST", "/charges", {
      customer,
      rawBody: '{"cartId":',
      headers: { "content-type": "application/json" },
    });
    expect(broken.status).toBe(400);
    expect(broken.json.type).toBe("urn:purchase-auth:problem:invalid-json");
  });

  it("the rateLimit hook's refusal is a 429 problem, before anything is charged", async () => {
    let allowed = 1;
    const { data, app } = await shop({ rateLimit: () => allowed-- > 0 });
    const customer = data.customer();
    expect((await charge(app, customer, { cartId: data.cart(customer) })).status).toBe(201);
    const refused = await charge(app, customer, { cartId: data.cart(customer) });
    expect(refused.status).toBe(429);
    expect(refused.json).toMatchObject({ type: "urn:purchase-auth:problem:too-many-requests", status: 429 });
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("a service slower than timeoutMs answers 503 'confirming', and the charge stays pending", async () => {
    const { data, app } = await shop({ timeoutMs: 100, receiveWebhooks: false });
    const customer = data.customer();
    const cartId = data.cart(customer);
    shops
      .sandbox()
      .injectFault({ kind: "latency", latencyMs: 400, match: { path: "/purchase/authorizations" } });
    const slow = await charge(app, customer, { cartId });
    expect(slow.status).toBe(503);
    expect(slow.json.type).toBe("urn:purchase-auth:problem:payment-confirming");
    expect(await app.router.store.findByReference(data.referenceOf(cartId))).toMatchObject({
      status: "pending",
    });
    // The service finishes the slow request; then the retried POST (same key) learns its outcome.
    await vi.waitFor(
      () => expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1),
      { timeout: 10_000 }, // the default second is too short on a loaded machine
    );
    shops.sandbox().clearFaults();
    const resolved = await charge(app, customer, { cartId });
    expect(resolved.json.status).toBe("captured");
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("a client from another copy of core that ignores deadlineMs is still bounded by timeoutMs", async () => {
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    const { merchant } = data;
    const real = new PurchaseAuthClient({
      baseUrl: sandbox.url,
      clientId: merchant.clientId,
      clientSecret: merchant.clientSecret,
      scope: merchant.scope,
    });
    // What an older core does with the options it does not know: nothing.
    const older = {
      authorizations: {
        create: (request: AuthorizationRequest, options?: WriteOptions) =>
          real.authorizations.create(request, {
            ...(options?.idempotencyKey === undefined ? {} : { idempotencyKey: options.idempotencyKey }),
            ...(options?.signal === undefined ? {} : { signal: options.signal }),
          }),
      },
      orders: real.orders,
      customerTokens: real.customerTokens,
      verifyWebhook: real.verifyWebhook.bind(real),
      close: () => real.close(),
    } as unknown as PurchaseAuthClient;
    const app = await startShopApp(data, { client: older, timeoutMs: 100, receiveWebhooks: false });
    try {
      const customer = data.customer();
      sandbox.injectFault({ kind: "latency", latencyMs: 400, match: { path: "/purchase/authorizations" } });
      const slow = await charge(app, customer, { cartId: data.cart(customer) });
      expect(slow.status).toBe(503);
      expect(slow.json.type).toBe("urn:purchase-auth:problem:payment-confirming");
    } finally {
      await app.close();
      await real.close();
    }
  });

  it("an order the app built wrongly is the app's bug: a generic 500, logged with its issues, nothing stored or charged", async () => {
    const { data, app } = await shop({
      buildOrder: () => ({
        reference: "order-with-a-bad-price",
        currency: "EUR",
        items: [{ id: "beans-1kg", description: "Coffee beans", unitPrice: "24.999", quantity: 1, vat: 14 }],
      }),
    });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: "anything" });
    // The shopper did nothing wrong and must not see the app's internal field paths.
    expect(reply.status).toBe(500);
    expect(reply.json).toMatchObject({ type: "urn:purchase-auth:problem:internal", status: 500 });
    expect(reply.text).not.toContain("unitPrice");
    // The developer sees what is wrong, in the log.
    expect(JSON.stringify(app.errorLogs)).toContain("order.items[0].unitPrice must have at most 2 decimals");
    expect(await app.router.store.findByReference("order-with-a-bad-price")).toBeUndefined();
    expect(shops.sandbox().authorizations({ merchantId: data.merchant.merchantId })).toEqual([]);
  });

  it("an order breaking several rules: the same 500 every time, each field in the log, not one request to the service", async () => {
    const reference = `order-${"x".repeat(45)}`; // 51 characters: one too many
    const { data, app } = await shop({
      buildOrder: () => ({
        reference,
        currency: "EURO",
        items: [{ id: "beans-1kg", description: "Coffee beans", unitPrice: "24.90", quantity: 0, vat: 140 }],
      }),
    });
    const customer = data.customer();
    const requestsBefore = shops.sandbox().stats().requests;
    const first = await charge(app, customer, { cartId: "anything" });
    const again = await charge(app, customer, { cartId: "anything" });
    expect(first.status).toBe(500);
    expect(first.headers["content-type"]).toMatch(/^application\/problem\+json/);
    const logged = JSON.stringify(app.errorLogs);
    for (const field of [
      "order.currency",
      "order.items[0].quantity",
      "order.items[0].vat",
      "order.reference",
    ]) {
      expect(logged).toContain(`"path":"${field}"`);
    }
    expect(first.json).toMatchObject({ type: "urn:purchase-auth:problem:internal", status: 500 });
    expect(again.status).toBe(500);
    expect(again.json).toEqual(first.json);
    expect(await app.router.store.findByReference(reference)).toBeUndefined();
    // Not even a token request: the order is refused before the client is used.
    expect(shops.sandbox().stats().requests).toBe(requestsBefore);
  });

  it("problems never carry a stack, internal text or a secret", async () => {
    const { data, app } = await shop({
      buildOrder: () => {
        throw new Error(`database password is ${data.merchant.clientSecret}`);
      },
    });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: "anything" });
    expect(reply.status).toBe(500);
    expect(reply.json).toEqual({
      type: "urn:purchase-auth:problem:internal",
      title: "Internal error",
      status: 500,
      detail: "Something went wrong on our side. Please try again later.",
    });
    expect(reply.text).not.toContain(data.merchant.clientSecret);
    expect(reply.text).not.toContain("at ");
    // Not ours to answer: it reached the app's own error handler (Sentry, say) through next(err).
    expect(app.appErrors).toHaveLength(1);
    expect(String(app.appErrors[0])).toContain("database password");
  });
});
