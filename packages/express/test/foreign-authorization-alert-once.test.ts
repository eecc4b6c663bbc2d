import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";

// Another order's authorization (Auto capture) matched by reference, its order.captured delivered
// first (parked under its id) and folded into the authorization.succeeded's change: one
// authorization, one unexpected_authorization alert, not one per news item. (Found by review.)

function event(type: string, data: object) {
  const signed = signWebhook({ type, data } as never, "secret");
  return verifyWebhook(signed.body, signed.headers, "secret");
}

describe("one foreign authorization, one alert", () => {
  it("order.captured delivered before authorization.succeeded", async () => {
    const store = new MemoryChargeStore();
    const alerts: PaymentAlert[] = [];
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: {},
      onEvent: undefined,
      alert: async (alert) => {
        alerts.push(alert);
      },
    });
    const now = new Date().toISOString();
    const reference = `order-${randomUUID().slice(0, 8)}`;
    const customerToken = randomUUID();
    await store.create({
      reference,
      customerId: "customer-1",
      attempt: 1,
      status: "pending",
      amount: "49.80",
      currency: "EUR",
      captureMode: "Auto",
      pendingAuthorization: {
        idempotencyKey: randomUUID(),
        request: {
          customerToken,
          order: { items: [], currency: "EUR", reference, captureMode: "Auto" },
        } as never,
        firstSentAt: now,
      },
      operations: { capture: 0, cancel: 0, refund: 0 },
      version: 1,
      createdAt: now,
      updatedAt: now,
    });

    const foreignId = randomUUID();
    const orderId = randomUUID();
    expect(
      await charges.receiveWebhook(
        event("order.captured", {
          orderId,
          authorizationId: foreignId,
          amount: "12.00",
          currency: "EUR",
          status: "Activated",
        }),
      ),
    ).toBe("parked");
    await charges.receiveWebhook(
      event("authorization.succeeded", {
        authorizationId: foreignId,
        orderId,
        customerToken: randomUUID(),
        reference,
        captureMode: "Auto",
        amount: "12.00",
        currency: "EUR",
      }),
    );

    const after = await store.findByReference(reference);
    expect(after).toMatchObject({ status: "pending", previousAuthorizationIds: [foreignId] });
    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", foreignId],
    ]);
  });
});
