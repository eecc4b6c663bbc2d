import type { IPaymentModuleService } from "@medusajs/framework/types";
import { Modules } from "@medusajs/framework/utils";
import { followFailedAuthorization } from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import { orderWithPayments, placeOrder } from "./support/checkout";
import { holdWebhooks } from "./support/hold-webhooks";
import { sessionsOf } from "./support/open-shop";
import { shopSuite } from "./support/shop-suite";
import { eventually } from "./support/store-api";

// An accepted (202) checkout whose payment collection was paid another way before the service's
// decline arrived: the decline is the session's alone. The collection and the order must not read
// failed while another live payment holds the order's money (the rule a late success follows).

shopSuite("failed-authorization-paid-otherwise", (suite) => {
  const { api, container, sandbox, shop, webhookUrl, setWebhooks } = suite;

  /**
   * Pays collection `collectionId` with Medusa's system provider, as the admin's "mark as paid"
   * does (a session authorized and captured; the admin route itself refuses an awaiting collection).
   */
  async function payOtherwise(collectionId: string, amount: number) {
    const payment = container().resolve(Modules.PAYMENT) as IPaymentModuleService;
    const session = await payment.createPaymentSession(collectionId, {
      provider_id: "pp_system_default",
      amount,
      currency_code: "eur",
      data: {},
    });
    const paid = await payment.authorizePaymentSession(session.id, {});
    expect(paid).not.toBeNull();
    await payment.capturePayment({ payment_id: paid!.id, amount });
    return paid!.id;
  }

  describe("an asynchronous decline after the order was paid another way", () => {
    it("marks only the session failed: the collection and the order do not read failed", async () => {
      // The decline's webhook is held back (a receiver that keeps it), and delivered after the payment.
      const held = await holdWebhooks();
      setWebhooks([held.url]);
      let orderId: string;
      try {
        ({ orderId } = await placeOrder(shop(), "declined-paid-otherwise@example.com", {
          needsChallenge: true,
          funds: "1.00",
        }));
        await sandbox().settle();
      } finally {
        setWebhooks();
        await held.close();
      }
      const placed = await orderWithPayments(shop(), orderId);
      const collection = placed.payment_collections[0]!;
      const sessionId = collection.payment_sessions[0]!.id;
      expect(collection.status).toBe("awaiting");
      const otherPaymentId = await payOtherwise(collection.id, 79.6);

      const failure = held.received.find((delivery) => delivery.type === "authorization.failed");
      expect(failure).toBeDefined();
      const delivered = await api.post(webhookUrl(), failure!.body, {
        headers: { ...failure!.headers, "content-type": "application/json" },
      });
      expect(delivered.status).toBe(200);
      await eventually(async () => {
        const sessions = await sessionsOf(container(), collection.id);
        return sessions.find((s) => s.id === sessionId)?.data.state === "failed" ? sessions : undefined;
      });
      // What the plugin's subscriber runs for the decline, awaited here so the test reads after it.
      await followFailedAuthorization(container(), sessionId, "PAYMENT_METHOD_NO_FUNDS");

      const after = await orderWithPayments(shop(), orderId);
      expect(after.metadata?.purchase_auth_payment_failed).toBeUndefined();
      const [afterCollection] = after.payment_collections;
      expect(afterCollection!.status).not.toBe("failed");
      expect(afterCollection!.payments.map((p) => [p.id, p.canceled_at])).toEqual([[otherPaymentId, null]]);
      const session = afterCollection!.payment_sessions.find((s) => s.id === sessionId);
      expect(session!.data).toMatchObject({ state: "failed", failure_reason: "PAYMENT_METHOD_NO_FUNDS" });
    });
  });
});
