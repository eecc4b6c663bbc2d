import { expect } from "vitest";
import { noCartRaceTests } from "./support/no-cart-race";
import { syncProviderTests } from "./support/sync-provider-tests";

// Auto capture: the one payment records the service's capture once, for the service's amount.
syncProviderTests(
  "no-cart-webhook-during-authorize-auto",
  (t) => {
    noCartRaceTests(t, async (_sessionId, orderId, paymentId) => {
      const order = t.serviceOrder(orderId)!;
      expect(order).toMatchObject({ status: "Activated", captureMode: "Auto" });
      expect(order.capturedAmount).toBe(order.totalAmount);
      const paid = await t.payment.retrievePayment(paymentId, { relations: ["captures"] });
      expect(paid.captures ?? []).toHaveLength(1);
      expect(Number(paid.captures![0]!.amount)).toBe(Number(order.capturedAmount));
      expect(paid.captured_at).not.toBeNull();
    });
  },
  { extra: { captureMode: "Auto" } },
);
