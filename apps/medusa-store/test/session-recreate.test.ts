import { describe, expect, it } from "vitest";
import { PURCHASE_AUTH_PROVIDER_ID } from "../src/scripts/seed-store";
import {
  cartWithCollection,
  completeCart,
  completeWithAnswerLost,
  customerWithToken,
  expectMedusaMatchesService,
  initiatePayment,
  type MedusaOrderPayments,
  orderOnceFollowed,
  orderWithPayments,
  placeOrder as placeOrderWith,
} from "./support/checkout";
import { sessionsOf } from "./support/open-shop";
import { shopSuite } from "./support/shop-suite";
import { eventually } from "./support/store-api";

// Medusa's store route POST /store/payment-collections/:id/payment-sessions deletes every session of
// the collection before adding the new one, calling the provider's deletePayment with each old
// session's data. Anyone with the publishable key and a cart id may call it (the cart shows its
// payment collection's id), and for a completed cart Medusa skips its region check, so the system
// provider is accepted. A placed order's money at the service must survive such a call: nothing
// cancelled, nothing refunded, Medusa's payment as it was. Re-initiating a cart that did not
// complete (after an unknown outcome) must still release what the service did.

shopSuite("session-recreate", (suite) => {
  const { api, container, sandbox, shop, setWebhooks, authorizationsOf: charged, serviceOrder } = suite;

  const anonymous = () => ({ "x-publishable-api-key": shop().publishableKey });

  const placeOrder = (email: string, token: { needsChallenge?: boolean; funds?: string } = {}) =>
    placeOrderWith(shop(), email, token);

  /** What an anonymous caller learns from the cart id: its payment collection's id. */
  async function collectionOfCart(cartId: string): Promise<string> {
    const { data } = await api.get<{ cart: { payment_collection?: { id: string } } }>(
      `/store/carts/${cartId}?fields=id,payment_collection.id`,
      { headers: anonymous() },
    );
    expect(data.cart.payment_collection?.id).toBeDefined();
    return data.cart.payment_collection!.id;
  }

  /** The parts of Medusa's payments and sessions a release would change. */
  const paymentsOf = (order: MedusaOrderPayments) =>
    order.payment_collections.map((collection) => ({
      payments: collection.payments.map((p) => ({
        id: p.id,
        captured_at: p.captured_at,
        canceled_at: p.canceled_at,
        captures: (p.captures ?? []).length,
        refunds: (p.refunds ?? []).length,
      })),
      sessions: collection.payment_sessions.map((s) => ({
        id: s.id,
        status: s.status,
        state: s.data.state,
      })),
    }));

  describe("re-initiating payment on a completed cart's collection, anonymously", () => {
    it("releases nothing of a placed (authorized) order", async () => {
      const { cartId, orderId } = await placeOrder("placed@example.com");
      const before = await orderWithPayments(shop(), orderId);
      const [payment] = before.payment_collections[0]!.payments;
      const held = serviceOrder(payment!.data.order_id);
      expect(held).toMatchObject({ status: "NotActivated", cancelledAmount: "0.00" });

      const collectionId = await collectionOfCart(cartId);
      const attempt = await initiatePayment(shop(), collectionId, anonymous(), "pp_system_default");

      expect(serviceOrder(held!.orderId)).toMatchObject({
        status: "NotActivated",
        capturedAmount: "0.00",
        cancelledAmount: "0.00",
        refundedAmount: "0.00",
      });
      expect(paymentsOf(await orderWithPayments(shop(), orderId))).toEqual(paymentsOf(before));
      expect(attempt.status).toBe(400);
      expect(attempt.data.message).toMatch(/cannot be replaced from the store/);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("releases nothing of an order the admin captured", async () => {
      const { cartId, orderId } = await placeOrder("captured@example.com");
      const [payment] = (await orderWithPayments(shop(), orderId)).payment_collections[0]!.payments;
      const captured = await api.post(
        `/admin/payments/${payment!.id}/capture`,
        {},
        { headers: shop().admin, validateStatus: () => true },
      );
      expect(captured.status).toBe(200);
      const before = await orderWithPayments(shop(), orderId);
      // Medusa never rewrites the session's data after a capture: it still reads "authorized".
      expect(before.payment_collections[0]!.payment_sessions[0]!.data.state).toBe("authorized");
      const held = serviceOrder(payment!.data.order_id);
      expect(held).toMatchObject({ status: "Activated", capturedAmount: "79.60" });

      const collectionId = await collectionOfCart(cartId);
      const attempt = await initiatePayment(shop(), collectionId, anonymous(), "pp_system_default");

      expect(serviceOrder(held!.orderId)).toMatchObject({
        status: "Activated",
        capturedAmount: "79.60",
        cancelledAmount: "0.00",
        refundedAmount: "0.00",
      });
      expect(paymentsOf(await orderWithPayments(shop(), orderId))).toEqual(paymentsOf(before));
      expect(attempt.status).toBe(400);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("keeps a placed order's pending (202) session, so its late success is recorded, not released", async () => {
      const { customer, cartId, orderId } = await placeOrder("pending@example.com", {
        needsChallenge: true,
      });
      const collectionId = await collectionOfCart(cartId);
      const attempt = await initiatePayment(shop(), collectionId, anonymous(), "pp_system_default");

      await sandbox().settle();
      const [authorization] = charged(customer.customerToken);
      expect(authorization?.status).toBe("Succeeded");
      // Either Medusa records the payment (session kept) or the plugin voids the success of a
      // session that is gone: wait for whichever happens, then say which it was.
      await eventually(async () => {
        const order = await orderWithPayments(shop(), orderId);
        if (order.payment_collections[0]!.payments.length > 0) return order;
        return serviceOrder(authorization!.orderId)?.status === "Cancelled" ? order : undefined;
      });
      expect(serviceOrder(authorization!.orderId)).toMatchObject({
        status: "NotActivated",
        cancelledAmount: "0.00",
      });
      const after = await orderOnceFollowed(shop(), orderId, { sessionState: "authorized" });
      expect(after.payment_collections[0]!.payments).toHaveLength(1);
      expect(attempt.status).toBe(400);
      await expectMedusaMatchesService(shop(), orderId);
    });
  });

  describe("re-initiating payment on a cart that did not complete", () => {
    it("still releases what an unknown outcome authorized, then pays anew", async () => {
      const customer = await customerWithToken(shop(), "unknown@example.com");
      const { cartId, collectionId } = await cartWithCollection(shop(), customer.headers);
      expect(
        (await initiatePayment(shop(), collectionId, customer.headers, PURCHASE_AUTH_PROVIDER_ID)).status,
      ).toBe(200);
      // The service's late authorization.succeeded would release the session by itself: no webhook
      // reaches Medusa until the owner has re-initiated, so only deletePayment can release it.
      setWebhooks([]);
      try {
        const failed = await completeWithAnswerLost(shop(), cartId, customer.headers);
        expect(failed.data.type).not.toBe("order");
        const [held] = charged(customer.customerToken);
        expect(held?.status).toBe("Succeeded"); // the service authorized; Medusa does not know
        await sandbox().settle(); // the success's webhook is due now: with no URL, it goes nowhere
        const [unknown] = await sessionsOf(container(), collectionId);
        expect(unknown).toMatchObject({ status: "error", data: { state: "unknown" } });
        expect(serviceOrder(held!.orderId)).toMatchObject({
          status: "NotActivated",
          cancelledAmount: "0.00",
        });

        // The owner re-initiates: deletePayment resends the unknown attempt's key and releases.
        expect(
          (await initiatePayment(shop(), collectionId, customer.headers, PURCHASE_AUTH_PROVIDER_ID)).status,
        ).toBe(200);
        expect(serviceOrder(held!.orderId)).toMatchObject({ status: "Cancelled", capturedAmount: "0.00" });
        const sessions = await sessionsOf(container(), collectionId);
        expect(sessions.map((s) => s.id)).not.toContain(unknown!.id);
      } finally {
        setWebhooks();
      }

      const completed = await completeCart(shop(), cartId, customer.headers);
      expect(completed.data.type).toBe("order");
      expect(charged(customer.customerToken)).toHaveLength(2);
      const { compared } = await expectMedusaMatchesService(shop(), completed.data.order!.id);
      expect(compared.map((o) => o.status)).toEqual(["NotActivated"]);
    });
  });
});
