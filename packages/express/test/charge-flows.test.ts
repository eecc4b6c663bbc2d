import { idempotencyKeyFor } from "@purchase-auth/core";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { call, charge, createShopData, type ShopApp, type ShopData, startShopApp } from "./support/shop.js";

// The charge flows of the specification and the supplement, end to end: a real Express app on a
// real socket, charging the sandbox, with webhooks delivered back to the app's webhook route.

let sandbox: SandboxServer;
const apps: ShopApp[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function shop(
  options: Parameters<typeof startShopApp>[1] = {},
): Promise<{ data: ShopData; app: ShopApp }> {
  const data = createShopData(sandbox);
  const app = await startShopApp(data, options);
  apps.push(app);
  return { data, app };
}

const HOUR = 3_600_000;

describe("synchronous charges (timing now)", () => {
  it("answers 201 captured for auto capture, charging the server's price list", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const cartId = data.cart(customer, [
      { sku: "beans-1kg", quantity: 2 },
      { sku: "grinder", quantity: 1 },
    ]);

    const reply = await charge(app, customer, { cartId });

    expect(reply.status).toBe(201);
    expect(reply.json).toEqual({
      authorizationId: expect.any(String),
      reference: data.referenceOf(cartId),
      status: "captured",
      orderId: expect.any(String),
      amount: "138.80",
      currency: "EUR",
      captureMode: "Auto",
    });
    const [authorization] = sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(authorization).toMatchObject({
      authorizationId: reply.json.authorizationId,
      amount: "138.80",
      reference: data.referenceOf(cartId),
      schedule: "synchronous",
      idempotencyKey: idempotencyKeyFor(
        data.referenceOf(cartId),
        customer.customerToken.toLowerCase(),
        "authorize",
        1,
      ),
    });

    // The webhooks that follow (succeeded, captured) are accepted and change nothing.
    await sandbox.settle();
    const deliveries = sandbox.webhookDeliveries().filter((d) => d.merchantId === data.merchant.merchantId);
    expect(deliveries.map((d) => [d.type, d.statusCode])).toEqual([
      ["authorization.succeeded", 200],
      ["order.captured", 200],
    ]);
    const status = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(status.status).toBe(200);
    expect(status.json.status).toBe("captured");
  });

  it("answers JSON that is never cached and carries no ETag (a charge changes with every webhook)", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const cartId = data.cart(customer, [{ sku: "grinder", quantity: 1 }]);

    const reply = await charge(app, customer, { cartId });
    const path = `/charges/${reply.json.authorizationId}`;
    const status = await call(app, "GET", path, { customer });
    const head = await call(app, "HEAD", path, { customer });

    for (const answer of [reply, status, head]) {
      expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
      expect(answer.headers["cache-control"]).toBe("no-store");
      expect(answer.headers.etag).toBeUndefined();
    }
    expect(Number(reply.headers["content-length"])).toBe(Buffer.byteLength(reply.text));
    expect(status.json).toMatchObject({ status: "captured", reference: data.referenceOf(cartId) });
    // HEAD: the GET's headers, no body.
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect(head.headers["content-length"]).toBe(status.headers["content-length"]);
  });

  it("answers 202-style pending when the token needs a challenge, then the webhook settles it", async () => {
    const { data, app } = await shop();
    const customer = data.customer({ needsChallenge: true });
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    expect(reply.status).toBe(201);
    expect(reply.json.status).toBe("pending");
    await sandbox.settle();
    const status = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(status.json).toMatchObject({ status: "captured", orderId: expect.any(String) });
  });
});

describe("asynchronous charges", () => {
  it("asap: pending, then authorization.succeeded and order.captured arrive by webhook", async () => {
    const { data, app } = await shop({ allowedTimings: ["asap"] });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer), timing: "asap" });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ status: "pending", authorizationId: expect.any(String) });
    expect(reply.json.orderId).toBeUndefined();

    await sandbox.settle();

    const status = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(status.json).toMatchObject({ status: "captured", orderId: expect.any(String) });
    expect(app.appliedEvents.map((event) => event.type)).toEqual([
      "authorization.succeeded",
      "order.captured",
    ]);
  });

  it("keeps the create call on record while the outcome is open, and drops it once authorized", async () => {
    const { data, app } = await shop({ allowedTimings: ["asap"] });
    const customer = data.customer();
    const cartId = data.cart(customer);
    const reply = await charge(app, customer, { cartId, timing: "asap" });
    const reference = data.referenceOf(cartId);
    // Accepted, outcome to come: the request and key stay, the reconciler may need them.
    const pending = await app.router.store.findByReference(reference);
    expect(pending).toMatchObject({ status: "pending" });
    expect(pending?.pendingAuthorization?.request.order.reference).toBe(reference);

    await sandbox.settle();
    const captured = await app.router.store.findByReference(reference);
    expect(captured).toMatchObject({ status: "captured", authorizationId: reply.json.authorizationId });
    expect(captured?.pendingAuthorization).toBeUndefined();
  });

  it("asap with manual capture: authorized by webhook, nothing captured", async () => {
    const { data, app } = await shop({ timing: "asap", captureMode: "Manual" });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    await sandbox.settle();
    const status = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(status.json).toMatchObject({ status: "authorized", captureMode: "Manual" });
    expect(sandbox.orders({ authorizationId: reply.json.authorizationId })[0]?.status).toBe("NotActivated");
  });

  it("scheduled: nothing happens until the schedule's delay has passed", async () => {
    const { data, app } = await shop({
      allowedTimings: ["scheduled"],
      schedules: { "in-an-hour": ["00.01:00:00"], nightly: ["00.08:00:00", "00.08:00:00"] },
    });
    const customer = data.customer();
    const reply = await charge(app, customer, {
      cartId: data.cart(customer),
      timing: "scheduled",
      schedule: "in-an-hour",
    });
    expect(reply.status).toBe(201);
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })[0]).toMatchObject({
      schedule: "relative",
      status: "Scheduled",
    });

    await sandbox.settle();
    const before = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(before.json.status).toBe("pending");

    sandbox.advanceClock(HOUR);
    await sandbox.settle();
    const after = await call(app, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(after.json.status).toBe("captured");
  });
});

describe("one charge per order reference", () => {
  it("a double click (two concurrent POSTs for one cart) makes one authorization", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const cartId = data.cart(customer);
    // Keep the first request in flight, so the second really overlaps it.
    sandbox.injectFault({ kind: "latency", latencyMs: 150, match: { path: "/purchase/authorizations" } });

    const replies = await Promise.all([charge(app, customer, { cartId }), charge(app, customer, { cartId })]);

    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 201]);
    expect(replies[0]!.json.authorizationId).toBe(replies[1]!.json.authorizationId);
    expect(replies.map((reply) => reply.json.status)).toEqual(["captured", "captured"]);
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("a repeated POST returns the existing charge's state", async () => {
    const { data, app } = await shop({ allowedTimings: ["asap"] });
    const customer = data.customer();
    const cartId = data.cart(customer);
    const first = await charge(app, customer, { cartId, timing: "asap" });
    await sandbox.settle();
    const again = await charge(app, customer, { cartId, timing: "asap" });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ authorizationId: first.json.authorizationId, status: "captured" });
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("an unknown outcome answers 503 'confirming' and the retried POST resolves it with the same key", async () => {
    // No webhooks here: they would tell the app the outcome by themselves (next test).
    const { data, app } = await shop({ clientOptions: { maxRetries: 0 }, receiveWebhooks: false });
    const customer = data.customer();
    const cartId = data.cart(customer);
    // Performed at the service, but the answer never arrives (twice: also the client's one
    // immediate retry of a reset keep-alive socket).
    sandbox.injectFault({ kind: "drop_after_commit", count: 2, match: { path: "/purchase/authorizations" } });

    const lost = await charge(app, customer, { cartId });
    expect(lost.status).toBe(503);
    expect(lost.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(lost.headers["retry-after"]).toBe("5");
    expect(lost.json).toMatchObject({
      type: "urn:purchase-auth:problem:payment-confirming",
      status: 503,
      detail: expect.stringContaining("We are confirming your payment"),
    });
    expect(await app.router.store.findByReference(data.referenceOf(cartId))).toMatchObject({
      status: "pending",
      attempt: 1,
    });
    sandbox.clearFaults();

    const resolved = await charge(app, customer, { cartId });
    expect(resolved.status).toBe(200);
    expect(resolved.json.status).toBe("captured");
    const authorizations = sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(authorizations).toHaveLength(1);
    expect(authorizations[0]!.authorizationId).toBe(resolved.json.authorizationId);
  });

  it("an unknown outcome is also resolved by the webhook, which finds the charge by its reference", async () => {
    const { data, app } = await shop({ clientOptions: { maxRetries: 0 } });
    const customer = data.customer();
    const cartId = data.cart(customer);
    sandbox.injectFault({ kind: "drop_after_commit", count: 2, match: { path: "/purchase/authorizations" } });
    expect((await charge(app, customer, { cartId })).status).toBe(503);
    sandbox.clearFaults();

    await sandbox.settle();

    const stored = await app.router.store.findByReference(data.referenceOf(cartId));
    const [authorization] = sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(stored).toMatchObject({ status: "captured", authorizationId: authorization!.authorizationId });
    const again = await charge(app, customer, { cartId });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ status: "captured", authorizationId: authorization!.authorizationId });
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });
});
