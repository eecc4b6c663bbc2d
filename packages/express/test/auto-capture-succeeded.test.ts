import { signWebhook, type WebhookEvent } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { call, charge, type ShopApp, type ShopData, useShops, WEBHOOK_SECRET } from "./support/shop.js";
import { readEventStream } from "./support/sse.js";

// Specification 4.1 rule 4 and supplement A: with captureMode Auto the order is captured
// (Activated) as soon as the authorization succeeds. An `authorization.succeeded` of an Auto
// authorization therefore says "captured", exactly as the synchronous 200 does: a charge accepted
// with 202 must not stay `authorized` for ever when its `order.captured` is lost.

const shops = useShops();
const { shop } = shops;

/** POSTs a webhook as the service would. */
function deliver(app: ShopApp, event: WebhookEvent) {
  const signed = signWebhook(event, [WEBHOOK_SECRET]);
  return call(app, "POST", "/webhooks", { rawBody: signed.body, headers: signed.headers });
}

/** The events the sandbox emitted about `authorizationId`, of `type`. */
function emitted(data: ShopData, authorizationId: string, type: string): WebhookEvent[] {
  return data.sandbox
    .events()
    .filter(
      (item) =>
        item.merchantId === data.merchant.merchantId &&
        item.event.type === type &&
        (item.event.data as { authorizationId?: string }).authorizationId === authorizationId,
    )
    .map((item) => item.event);
}

for (const captureMode of ["Auto", "Manual"] as const) {
  it(`${captureMode}: an accepted charge told only authorization.succeeded (order.captured lost) is ${captureMode === "Auto" ? "captured" : "authorized"}, and its live updates end`, async () => {
    const { data, app } = await shop({
      timing: "asap",
      captureMode,
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      // Bounds the stream if it never ends by itself (the failure this test guards against).
      liveUpdates: { maxDurationMs: 3_000 },
    });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    expect(reply.json.status).toBe("pending");
    const id = reply.json.authorizationId as string;
    await data.sandbox.settle();
    const [succeeded] = emitted(data, id, "authorization.succeeded");
    expect(succeeded?.data).toMatchObject({ captureMode });
    expect(data.sandbox.orders({ authorizationId: id })[0]?.status).toBe(
      captureMode === "Auto" ? "Activated" : "NotActivated",
    );

    const stream = await readEventStream(app, `/charges/${id}/events`, customer, async (_event, index) => {
      if (index === 0) expect((await deliver(app, succeeded!)).status).toBe(200);
    });
    const expected = captureMode === "Auto" ? "captured" : "authorized";
    expect(stream.events.at(-1)?.event).toBe("end");
    expect(JSON.parse(stream.events.at(-1)!.data)).toMatchObject({ status: expected });

    // The reconciler has nothing to fix, and the status agrees with the service's order.
    await app.router.reconcile();
    const status = await call(app, "GET", `/charges/${id}`, { customer });
    const { orderId } = succeeded!.data as { orderId: string };
    expect(status.json).toMatchObject({ status: expected, orderId });

    // The lost order.captured still arrives late (Auto): nothing moves backwards or twice.
    for (const late of emitted(data, id, "order.captured"))
      expect((await deliver(app, late)).status).toBe(200);
    const after = await call(app, "GET", `/charges/${id}`, { customer });
    expect(after.json.status).toBe(expected);
  });
}

describe("consistency with the synchronous answer", () => {
  it("Auto: the synchronous 200 says captured too (the same reading of rule 4)", async () => {
    const { data, app } = await shop({ receiveWebhooks: false, reconcileIntervalMs: 0 });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    expect(reply.json).toMatchObject({ status: "captured", captureMode: "Auto" });
  });
});
