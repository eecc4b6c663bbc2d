import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook, type WebhookEvent } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { type ChargeRecord, MemoryChargeStore } from "../src/index.js";

// An authorization.succeeded the charge does not hold is applied like any event: `onEvent` runs
// for it before it counts as applied (the README's promise). (Found by review.)

function event(type: string, data: object) {
  const signed = signWebhook({ type, data } as never, "secret");
  return verifyWebhook(signed.body, signed.headers, "secret");
}

describe("a foreign authorization.succeeded reaches onEvent before it counts as applied", () => {
  it("onEvent runs for it", async () => {
    const store = new MemoryChargeStore();
    const seen: WebhookEvent[] = [];
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: {},
      onEvent: (received) => {
        seen.push(received);
      },
      alert: async () => {},
    });
    const now = new Date().toISOString();
    const charge: ChargeRecord = {
      reference: `order-${randomUUID().slice(0, 8)}`,
      customerId: "customer-1",
      attempt: 1,
      status: "pending",
      amount: "49.80",
      currency: "EUR",
      captureMode: "Manual",
      operations: { capture: 0, cancel: 0, refund: 0 },
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    await store.create(charge);
    await charges.apply(charge.reference, { kind: "accepted", authorizationId: randomUUID(), attempt: 1 });
    const foreign = event("authorization.succeeded", {
      authorizationId: randomUUID(),
      orderId: randomUUID(),
      customerToken: randomUUID(),
      reference: charge.reference,
      captureMode: "Manual",
      amount: "49.80",
      currency: "EUR",
    });

    await charges.receiveWebhook(foreign);
    // Acknowledged as applied: its redelivery is a duplicate, so onEvent gets no second chance.
    expect(await charges.receiveWebhook(foreign)).toBe("duplicate");
    expect(seen.map((received) => received.id)).toEqual([foreign.id]);
  });
});
