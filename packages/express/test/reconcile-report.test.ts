import type { WebhookEvent } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import { charge, useShops } from "./support/shop.js";

// What a reconcile pass reports it did, checked against what it did to the store.

const shops = useShops();
const { shop } = shops;

describe("the reconcile report", () => {
  it("eventsApplied counts the stored events the pass applied, not the charges whose version changed", async () => {
    const store = new MemoryChargeStore();
    const { data, app } = await shop({
      store,
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      allowedTimings: ["asap"],
    });
    /** An accepted (202) charge, and the events the sandbox emitted for its authorization. */
    const acceptedCharge = async () => {
      const customer = data.customer();
      const cartId = data.cart(customer, [{ sku: "beans-1kg", quantity: 1 }]);
      expect((await charge(app, customer, { cartId, timing: "asap" })).status).toBe(201);
      await shops.sandbox().settle();
      const accepted = (await store.findByReference(data.referenceOf(cartId)))!;
      expect(accepted).toMatchObject({ status: "pending" });
      const eventOf = (type: string) =>
        shops
          .sandbox()
          .events()
          .find(
            (emitted) =>
              emitted.event.type === type &&
              (emitted.event.data as { authorizationId?: string }).authorizationId ===
                accepted.authorizationId,
          )!.event as WebhookEvent;
      return { accepted, succeeded: eventOf("authorization.succeeded"), captured: eventOf("order.captured") };
    };
    const stored = (event: WebhookEvent, authorizationId: string) =>
      store.recordEvent({ id: event.id, authorizationId, event, receivedAt: new Date().toISOString() });

    // Charge A: both events stored and acknowledged, then a crash before either was applied.
    const a = await acceptedCharge();
    await stored(a.succeeded, a.accepted.authorizationId!);
    await stored(a.captured, a.accepted.authorizationId!);
    // Charge B: moved to captured by its order.captured, then a crash before it was marked applied.
    const b = await acceptedCharge();
    await stored(b.captured, b.accepted.authorizationId!);
    await store.compareAndSet(b.accepted.version, {
      ...b.accepted,
      status: "captured",
      orderId: (b.captured.data as { orderId: string }).orderId,
      version: b.accepted.version + 1,
    });

    const report = await app.router.reconcile();
    // Three events applied: two that changed A (one change counted once before), and B's, which
    // changed nothing (not counted at all before).
    expect(report).toMatchObject({ examined: 2, eventsApplied: 3 });
    expect(await store.findByReference(a.accepted.reference)).toMatchObject({ status: "captured" });
    expect(await store.unappliedEvents(a.accepted.authorizationId!)).toEqual([]);
    expect(await store.unappliedEvents(b.accepted.authorizationId!)).toEqual([]);
    // Nothing is left: the next pass applies nothing.
    expect(await app.router.reconcile()).toMatchObject({ eventsApplied: 0 });
  });
});
