import { expect } from "vitest";
import { noCartRaceTests } from "./support/no-cart-race";
import { syncProviderTests } from "./support/sync-provider-tests";

// Manual capture: the one payment is authorized, the service's order still holds the money.
syncProviderTests("no-cart-webhook-during-authorize", (t) => {
  noCartRaceTests(t, async (_sessionId, orderId, paymentId) => {
    expect(t.serviceOrder(orderId)).toMatchObject({ status: "NotActivated", capturedAmount: "0.00" });
    const paid = await t.payment.retrievePayment(paymentId, { relations: ["captures"] });
    expect(paid.captures ?? []).toHaveLength(0);
  });
});
