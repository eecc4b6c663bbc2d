import { randomUUID } from "node:crypto";
import { signWebhook } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import {
  type AppOptions,
  call,
  charge,
  type ShopApp,
  staffOnly,
  useShops,
  WEBHOOK_SECRET,
} from "./support/shop.js";

// The webhook route (supplement C): raw-body verification, deduplication by event id, forward-only
// application, 2xx only once stored; against the sandbox's deliveries and against hand-signed events.

const shops = useShops();
const { shop } = shops;

/** POSTs a webhook as the service would, signed with `secrets`. */
function deliver(
  app: ShopApp,
  event: { type: string; data: unknown; id?: string },
  secrets = [WEBHOOK_SECRET],
) {
  const signed = signWebhook(event, secrets);
  return call(app, "POST", "/webhooks", { rawBody: signed.body, headers: signed.headers });
}

/** A synchronously captured charge (auto capture) whose webhooks have all been delivered. */
async function capturedCharge(options: AppOptions = {}) {
  const { data, app } = await shop(options);
  const customer = data.customer();
  const reply = await charge(app, customer, { cartId: data.cart(customer) });
  await shops.sandbox().settle();
  const stored = (await app.router.store.findByAuthorizationId(reply.json.authorizationId))!;
  return { data, app, customer, stored };
}

describe("verification", () => {
  it("a forged webhook (wrong secret) is 400 and changes nothing", async () => {
    const { data, app } = await shop({ timing: "asap" });
    const customer = data.customer({ needsChallenge: true });
    // Accepted, not yet attempted: nothing delivered yet.
    shops.sandbox().setWebhooks({ merchantId: data.merchant.merchantId, urls: [] });
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    const forged = await deliver(
      app,
      {
        type: "authorization.failed",
        data: {
          authorizationId: reply.json.authorizationId,
          customerToken: customer.customerToken,
          reason: "PAYMENT_DENIED",
          attempt: 1,
        },
      },
      ["whsec_guessed"],
    );
    expect(forged.status).toBe(400);
    expect(forged.json).toMatchObject({
      type: "urn:purchase-auth:problem:invalid-webhook",
      detail: "The webhook failed verification (invalid_signature).",
    });
    expect((await app.router.store.findByAuthorizationId(reply.json.authorizationId))!.status).toBe(
      "pending",
    );
  });

  it("a body changed after signing, a missing signature or an old timestamp is 400", async () => {
    const { app } = await shop();
    const event = {
      type: "customer-token.status-changed",
      data: { customerToken: randomUUID(), status: "Revoked", previousStatus: "Active" },
    };
    const signed = signWebhook(event, WEBHOOK_SECRET);
    const tampered = await call(app, "POST", "/webhooks", {
      rawBody: signed.body.replace("Revoked", "Active"),
      headers: signed.headers,
    });
    expect(tampered.status).toBe(400);

    const { "service-webhook-signature": _signature, ...unsigned } = signed.headers;
    expect((await call(app, "POST", "/webhooks", { rawBody: signed.body, headers: unsigned })).status).toBe(
      400,
    );

    const old = signWebhook(event, WEBHOOK_SECRET, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    const replayedLater = await call(app, "POST", "/webhooks", { rawBody: old.body, headers: old.headers });
    expect(replayedLater.status).toBe(400);
    expect(replayedLater.json.detail).toContain("timestamp_outside_tolerance");
  });

  it("accepts every secret during rotation", async () => {
    const { app } = await shop({ webhookSecret: ["whsec_new_one", WEBHOOK_SECRET] });
    const event = {
      type: "customer-token.status-changed",
      data: { customerToken: randomUUID(), status: "Revoked", previousStatus: "Active" },
    };
    expect((await deliver(app, event, [WEBHOOK_SECRET])).status).toBe(200);
    expect((await deliver(app, event, ["whsec_new_one"])).status).toBe(200);
    expect((await deliver(app, event, ["whsec_old_gone"])).status).toBe(400);
  });

  it("an unsupported event type is acknowledged (2xx) and ignored", async () => {
    const { app } = await shop();
    const reply = await deliver(app, { type: "payout.created", data: { amount: "1.00" } });
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ received: true, outcome: "unsupported" });
    expect(app.appliedEvents).toEqual([]);
  });
});

describe("deduplication and order", () => {
  it("a replayed webhook (same id twice) is applied once", async () => {
    const { app, stored, customer } = await capturedCharge();
    const event = {
      id: randomUUID(),
      type: "order.refunded",
      data: {
        orderId: stored.orderId,
        authorizationId: stored.authorizationId,
        amount: "49.80",
        currency: "EUR",
        status: "Returned",
      },
    };
    const before = app.appliedEvents.length;
    const first = await deliver(app, event);
    const replay = await deliver(app, event);
    expect(first.json.outcome).toBe("applied");
    expect(replay.status).toBe(200);
    expect(replay.json.outcome).toBe("duplicate");
    expect(app.appliedEvents.slice(before)).toEqual([{ id: event.id, type: "order.refunded" }]);
    const status = await call(app, "GET", `/charges/${stored.authorizationId}`, { customer });
    expect(status.json.status).toBe("refunded");
  });

  it("late news never moves a charge backwards: retrying or failed after success change nothing", async () => {
    const { app, stored, customer } = await capturedCharge();
    const late = [
      {
        type: "authorization.retrying",
        data: {
          authorizationId: stored.authorizationId,
          customerToken: customer.customerToken,
          reason: "PAYMENT_FAILED",
          attempt: 1,
          maxAttempts: 3,
          nextAttemptAt: new Date().toISOString(),
        },
      },
      {
        type: "authorization.failed",
        data: {
          authorizationId: stored.authorizationId,
          customerToken: customer.customerToken,
          reference: stored.reference,
          reason: "PAYMENT_DENIED",
          attempt: 2,
        },
      },
      {
        type: "authorization.succeeded",
        data: {
          authorizationId: stored.authorizationId,
          orderId: stored.orderId,
          customerToken: customer.customerToken,
          captureMode: "Auto",
          amount: "49.80",
          currency: "EUR",
        },
      },
    ];
    for (const event of late) expect((await deliver(app, event)).json.outcome).toBe("applied");
    expect(await app.router.store.findByAuthorizationId(stored.authorizationId!)).toEqual(stored);
  });

  it("out-of-order and duplicated deliveries from the sandbox end in the right state, each event once", async () => {
    shops.sandbox().setWebhookDelivery({ outOfOrder: true, duplicate: true });
    const { data, app } = await shop({
      allowedCaptureModes: ["Manual"],
      allowedTimings: ["asap"],
      authorizeMerchant: staffOnly,
    });
    const customer = data.customer();
    const reply = await charge(app, customer, {
      cartId: data.cart(customer),
      captureMode: "Manual",
      timing: "asap",
    });
    await shops.sandbox().settle();
    const id = reply.json.authorizationId;
    expect((await call(app, "GET", `/charges/${id}`, { customer })).json.status).toBe("authorized");

    await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      body: { amount: "9.80", sequence: 1 },
    });
    await call(app, "POST", `/charges/${id}/capture`, {
      merchant: true,
      headers: { "content-type": "application/json" },
    });
    await call(app, "POST", `/charges/${id}/refund`, {
      merchant: true,
      body: { amount: "49.80", sequence: 1 },
    });
    await shops.sandbox().settle();
    // Events still arriving after the merchant's writes (newest first, twice each): the charge
    // never slides back to partially_captured.
    expect((await call(app, "GET", `/charges/${id}`, { customer })).json.status).toBe("refunded");

    const emitted = shops
      .sandbox()
      .events()
      .filter((entry) => entry.merchantId === data.merchant.merchantId);
    const deliveries = shops
      .sandbox()
      .webhookDeliveries()
      .filter((entry) => entry.merchantId === data.merchant.merchantId);
    expect(deliveries.length).toBe(2 * emitted.length);
    expect(deliveries.every((delivery) => delivery.statusCode === 200)).toBe(true);
    const appliedIds = app.appliedEvents.map((event) => event.id);
    expect(appliedIds.sort()).toEqual(emitted.map((entry) => entry.event.id).sort());
  });

  it("an event about an authorization the app has not learnt yet waits in the store, then applies", async () => {
    // The create call's answer is lost (the app answers 503 "confirming"), and the events come
    // newest first: order.captured arrives about an authorization id the app does not know.
    shops.sandbox().setWebhookDelivery({ outOfOrder: true });
    const { data, app } = await shop({ clientOptions: { maxRetries: 0 } });
    const customer = data.customer();
    const cartId = data.cart(customer);
    shops
      .sandbox()
      .injectFault({ kind: "drop_after_commit", count: 2, match: { path: "/purchase/authorizations" } });
    expect((await charge(app, customer, { cartId })).status).toBe(503);
    shops.sandbox().clearFaults();

    await shops.sandbox().settle();

    // authorization.succeeded (found by its reference) told the charge its id; the waiting
    // order.captured was applied then.
    const [authorization] = shops.sandbox().authorizations({ merchantId: data.merchant.merchantId });
    const stored = await app.router.store.findByReference(data.referenceOf(cartId));
    expect(stored).toMatchObject({ status: "captured", authorizationId: authorization!.authorizationId });
    expect(app.appliedEvents.map((event) => event.type)).toEqual([
      "authorization.succeeded",
      "order.captured",
    ]);
    expect(await app.router.store.unappliedEvents(authorization!.authorizationId)).toEqual([]);
  });
});
