import { randomUUID } from "node:crypto";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { PurchaseAuthClient } from "@purchase-auth/core";
import {
  chargeStoredTokenWorkflow,
  reconcileUnknownOutcomes,
  type StoredTokenCharge,
} from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import {
  cartWithCollection,
  checkoutWithAnswerLost,
  completeCart,
  customerWithToken,
  expectMedusaMatchesService,
  initiatePayment,
  orderOnceFollowed,
  orderWithPayments,
  payAnewAfterRelease,
  placeOrder as placeOrderWith,
} from "./support/checkout";
import { holdWebhooks } from "./support/hold-webhooks";
import { serverOrder } from "./support/orders";
import { shopSuite } from "./support/shop-suite";
import { eventually, registerCustomer } from "./support/store-api";

// Issue 13 on the whole application (medusa-config.ts, the plugin as a merchant installs it), real
// PostgreSQL and the sandbox over HTTP: who may complete a cart paid with a stored token, and
// Medusa following the service (cancels, late and failed authorizations, the service's events,
// unknown outcomes, an order charged again after its hold lapsed). After every scenario Medusa's
// payments are compared with the service's orders.

/** Manual-capture orders lapse after 10 virtual minutes here (30 days by default). */
const ORDER_EXPIRY_MS = 10 * 60_000;

shopSuite("lifecycle", { sandbox: { orderExpiryMs: ORDER_EXPIRY_MS } }, (suite) => {
  const {
    api,
    container,
    sandbox,
    merchant,
    shop,
    store,
    webhookUrl,
    setWebhooks,
    authorizationsOf: charged,
  } = suite;

  const anonymous = () => ({ "x-publishable-api-key": shop().publishableKey });

  const placeOrder = (email: string, token: { needsChallenge?: boolean; funds?: string } = {}) =>
    placeOrderWith(shop(), email, token);

  describe("completing a cart paid with a stored token", () => {
    it("is refused, before any charge, to an anonymous caller, another customer and on a guest cart", async () => {
      const owner = await customerWithToken(shop(), "owner@example.com");
      const { cartId, collectionId } = await cartWithCollection(shop(), owner.headers);
      expect((await initiatePayment(shop(), collectionId, owner.headers)).status).toBe(200);

      // Anyone who knows the cart id: Medusa's route alone would charge the owner's token.
      const byAnonymous = await completeCart(shop(), cartId, anonymous());
      expect(byAnonymous.status).toBe(401);
      expect(charged(owner.customerToken)).toHaveLength(0);

      const other = await registerCustomer(api, shop().publishableKey, "other@example.com");
      const byOther = await completeCart(shop(), cartId, other.headers);
      expect(byOther.status).toBe(403);
      expect(charged(owner.customerToken)).toHaveLength(0);

      // A guest's cart carrying the owner's token (the owner opened the session on it).
      const guestCart = await cartWithCollection(shop(), anonymous(), "guest@example.com");
      expect((await initiatePayment(shop(), guestCart.collectionId, owner.headers)).status).toBe(200);
      const byGuest = await completeCart(shop(), guestCart.cartId, anonymous());
      expect(byGuest.status).toBe(401);
      const byOwnerOnGuestCart = await completeCart(shop(), guestCart.cartId, owner.headers);
      expect(byOwnerOnGuestCart.status).toBe(403);
      expect(charged(owner.customerToken)).toHaveLength(0);

      // The owner, logged in, completes their own cart.
      const byOwner = await completeCart(shop(), cartId, owner.headers);
      expect(byOwner.data.type).toBe("order");
      expect(charged(owner.customerToken)).toHaveLength(1);
      await expectMedusaMatchesService(shop(), byOwner.data.order!.id);
    });
  });

  describe("attaching a token answers with the reason", () => {
    it("404 for an unknown token, 400 naming the status for a revoked one, 422 for another customer's", async () => {
      const customer = await registerCustomer(api, shop().publishableKey, "attach@example.com");
      const url = `/admin/customers/${customer.customerId}/purchase-auth-tokens`;
      const unknown = await api.post<{ message: string }>(
        url,
        { customer_token: "6f1c1a52-8a4e-4c43-9a55-0c1a3f7d2b10" },
        { headers: shop().admin, validateStatus: () => true },
      );
      expect(unknown.status).toBe(404);
      expect(unknown.data.message).toMatch(/does not know this customer token/);

      const revoked = sandbox().createCustomerToken({
        merchantId: merchant().merchantId,
        status: "Revoked",
      }).customerToken;
      const refused = await api.post<{ message: string }>(
        url,
        { customer_token: revoked },
        { headers: shop().admin, validateStatus: () => true },
      );
      expect(refused.status).toBe(400);
      expect(refused.data.message).toMatch(/it is Revoked \(TOKEN_REVOKED/);

      const owner = await customerWithToken(shop(), "first-owner@example.com");
      const taken = await api.post<{ message: string }>(
        url,
        { customer_token: owner.customerToken },
        { headers: shop().admin, validateStatus: () => true },
      );
      expect(taken.status).toBe(422);
      expect(taken.data.message).toMatch(/already attached to another customer/);
    });
  });

  describe("Medusa follows the service", () => {
    it("canceling a partly captured order releases the uncaptured remainder", async () => {
      const { orderId } = await placeOrder("partial@example.com");
      const [payment] = (await orderWithPayments(shop(), orderId)).payment_collections[0]!.payments;
      await api.post(`/admin/payments/${payment!.id}/capture`, { amount: 30 }, { headers: shop().admin });
      await api.post(`/admin/orders/${orderId}/cancel`, {}, { headers: shop().admin });
      const serviceOrder = await eventually(async () => {
        const found = sandbox()
          .orders()
          .find((o) => o.orderId === payment!.data.order_id);
        return found?.cancelledAmount === "49.60" ? found : undefined;
      });
      expect(serviceOrder).toMatchObject({
        capturedAmount: "30.00",
        refundedAmount: "30.00",
        status: "Returned",
      });
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("a success that arrives after the order was canceled is voided at the service", async () => {
      // The success webhook is held back (a receiver that keeps it), and delivered after the cancel.
      const held = await holdWebhooks();
      setWebhooks([held.url]);
      let customer: Awaited<ReturnType<typeof placeOrder>>["customer"];
      let orderId: string;
      try {
        ({ customer, orderId } = await placeOrder("late@example.com", { needsChallenge: true }));
        await sandbox().settle();
      } finally {
        setWebhooks();
        await held.close();
      }
      const [authorization] = charged(customer.customerToken);
      expect(authorization?.status).toBe("Succeeded");
      expect((await orderWithPayments(shop(), orderId)).payment_collections[0]!.payments).toEqual([]);

      await api.post(`/admin/orders/${orderId}/cancel`, {}, { headers: shop().admin });
      await eventually(async () => {
        const session = (await orderWithPayments(shop(), orderId)).payment_collections[0]!
          .payment_sessions[0];
        return session?.data.medusa_canceled_at ? session : undefined;
      });
      const success = held.received.find(
        (delivery) =>
          delivery.type === "authorization.succeeded" &&
          delivery.body.includes(authorization!.authorizationId),
      );
      expect(success).toBeDefined();
      const delivered = await api.post(webhookUrl(), success!.body, {
        headers: { ...success!.headers, "content-type": "application/json" },
      });
      expect(delivered.status).toBe(200);
      const voided = await eventually(async () => {
        const found = sandbox()
          .orders()
          .find((o) => o.orderId === authorization!.orderId);
        return found?.status === "Cancelled" ? found : undefined;
      });
      expect(voided).toMatchObject({ capturedAmount: "0.00", cancelledAmount: "79.60" });
      // The session's data is written after the void, once the service's order is read again.
      const after = await orderOnceFollowed(shop(), orderId, { sessionState: "canceled" });
      expect(after.payment_collections[0]!.payments).toEqual([]);
      expect(after.payment_collections[0]!.payment_sessions[0]!.data).toMatchObject({
        state: "canceled",
        order_id: authorization!.orderId,
        service_status: "Cancelled",
      });
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("an asynchronous decline marks the payment failed and says why on the order", async () => {
      const { customer, orderId } = await placeOrder("declined@example.com", {
        needsChallenge: true,
        funds: "1.00",
      });
      await sandbox().settle();
      expect(charged(customer.customerToken)[0]?.status).toBe("Failed");
      const order = await orderOnceFollowed(shop(), orderId, {
        sessionState: "failed",
        collectionStatus: "failed",
      });
      expect(order.metadata).toMatchObject({
        purchase_auth_payment_failed: { reason: "PAYMENT_METHOD_NO_FUNDS" },
      });
      expect(order.payment_collections[0]!.payment_sessions[0]!.data).toMatchObject({
        state: "failed",
        failure_reason: "PAYMENT_METHOD_NO_FUNDS",
      });
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("a token revoked at the service is flagged and never picked by default", async () => {
      const customer = await customerWithToken(shop(), "revoked@example.com");
      sandbox().setCustomerTokenStatus(customer.customerToken, "Revoked");
      await sandbox().settle();
      await eventually(async () => {
        const { data } = await api.get<{ customer_tokens: Array<{ status?: string }> }>(
          "/store/customers/me/purchase-auth-tokens",
          { headers: customer.headers },
        );
        return data.customer_tokens[0]?.status === "Revoked" ? data : undefined;
      });
      const { collectionId } = await cartWithCollection(shop(), customer.headers);
      const refused = await initiatePayment(shop(), collectionId, customer.headers);
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.data)).toMatch(/no stored customer token for EUR/);
    });

    it("the reconciler settles an unknown outcome; re-initiating then pays anew", async () => {
      // The service did authorize; Medusa does not know.
      const checkout = await checkoutWithAnswerLost(shop(), "unknown@example.com", charged);
      const { held } = checkout;

      const report = await reconcileUnknownOutcomes(container());
      expect(report.resolved).toHaveLength(1);
      expect(
        sandbox()
          .orders()
          .find((o) => o.orderId === held.orderId),
      ).toMatchObject({
        status: "Cancelled",
        capturedAmount: "0.00",
      });

      await payAnewAfterRelease(shop(), checkout, charged);
    });

    it("deleting a customer detaches their tokens", async () => {
      const customer = await customerWithToken(shop(), "leaving@example.com");
      await api.delete(`/admin/customers/${customer.customerId}`, { headers: shop().admin });
      const knex = container().resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as {
        raw(
          sql: string,
          bindings: unknown[],
        ): Promise<{ rows: Array<{ data: { customer_tokens: unknown[] } }> }>;
      };
      await eventually(async () => {
        const { rows } = await knex.raw(
          "select data from account_holder where external_id = ? and deleted_at is null",
          [customer.customerId],
        );
        return rows.every((row) => row.data.customer_tokens.length === 0) ? rows : undefined;
      });
      // No longer anyone's: it can be attached to a new customer.
      const next = await registerCustomer(api, shop().publishableKey, "successor@example.com");
      const attached = await api.post(
        `/admin/customers/${next.customerId}/purchase-auth-tokens`,
        { customer_token: customer.customerToken },
        { headers: shop().admin, validateStatus: () => true },
      );
      expect(attached.status).toBe(201);
    });

    it("a capture and a refund made at the service outside Medusa count on the order for their own amounts", async () => {
      // Recorded by the plugin, they had no order transaction: the order's paid total left them out,
      // and Medusa's next admin capture (refund) gave them its own amount too.
      const { orderId } = await placeOrder("outside-writes@example.com");
      const [payment] = (await orderWithPayments(shop(), orderId)).payment_collections[0]!.payments;
      const serviceOrderId = String(payment!.data.order_id);
      const client = new PurchaseAuthClient({
        baseUrl: sandbox().url,
        clientId: merchant().clientId,
        clientSecret: merchant().clientSecret,
        scope: merchant().scope,
      });
      const transactions = async (reference: "capture" | "refund") =>
        (await container().resolve(Modules.ORDER).listOrderTransactions({ order_id: orderId }))
          .filter((t) => t.reference === reference)
          .map((t) => Number(t.amount))
          .sort((a, b) => a - b);
      // The service's order.captured (order.refunded) event: the plugin records the write.
      const recorded = (reference: "capture" | "refund", count: number) =>
        eventually(async () => ((await transactions(reference)).length === count ? true : undefined));

      await client.orders.capture(serviceOrderId, { amount: "20.00" }, { idempotencyKey: randomUUID() });
      await recorded("capture", 1);
      await api.post(`/admin/payments/${payment!.id}/capture`, { amount: 30 }, { headers: shop().admin });
      expect(await transactions("capture")).toEqual([20, 30]);

      await client.orders.refund(serviceOrderId, { amount: "5.00" }, { idempotencyKey: randomUUID() });
      await recorded("refund", 1);
      await api.post(`/admin/payments/${payment!.id}/refund`, { amount: 10 }, { headers: shop().admin });
      expect(await transactions("refund")).toEqual([-10, -5]);
      const { compared } = await expectMedusaMatchesService(shop(), orderId);
      expect(compared[0]).toMatchObject({ capturedAmount: "50.00", refundedAmount: "15.00" });
    });

    it("an order that expires at the service cancels Medusa's payment", async () => {
      const { orderId } = await placeOrder("expiring@example.com");
      sandbox().advanceClock(ORDER_EXPIRY_MS);
      await sandbox().settle();
      const order = await eventually(async () => {
        const found = await orderWithPayments(shop(), orderId);
        return found.payment_collections[0]!.payments[0]?.canceled_at ? found : undefined;
      });
      expect(order.payment_collections[0]!.payments[0]!.data).toMatchObject({ service_status: "Expired" });
      const { compared } = await expectMedusaMatchesService(shop(), orderId);
      expect(compared[0]).toMatchObject({ status: "Expired", cancelledAmount: "79.60" });
    });
  });

  const charge = async (orderId: string) =>
    (await chargeStoredTokenWorkflow(container()).run({ input: { order_id: orderId } }))
      .result as StoredTokenCharge;

  describe("charging an order again after its hold expired at the service", () => {
    it("makes a new attempt with a new session instead of reporting the canceled payment", async () => {
      const email = "expired-hold@example.com";
      const customer = await customerWithToken(shop(), email);
      const orderId = await serverOrder(container(), store(), customer.customerId, email);
      const first = await charge(orderId);
      expect(first).toMatchObject({ status: "authorized", attempted: true });

      // The hold lapses at the service; its order.cancelled webhook makes Medusa cancel the payment.
      sandbox().advanceClock(ORDER_EXPIRY_MS);
      await sandbox().settle();
      await eventually(async () => {
        const order = await orderWithPayments(shop(), orderId);
        return order.payment_collections[0]!.payments[0]?.canceled_at ? order : undefined;
      });

      const second = await charge(orderId);
      expect(second).toMatchObject({ status: "authorized", attempted: true });
      expect(second.payment_id).not.toBe(first.payment_id);
      expect(second.payment_session_id).not.toBe(first.payment_session_id);
      expect(second.service_order_id).not.toBe(first.service_order_id);
      const authorizations = sandbox().authorizations({
        merchantId: merchant().merchantId,
        customerToken: customer.customerToken,
      });
      expect(authorizations.map((a) => [a.actionReference, a.status])).toEqual([
        [first.payment_session_id, "Succeeded"],
        [second.payment_session_id, "Succeeded"],
      ]);

      // Running it once more reports the new payment and sends nothing.
      const third = await charge(orderId);
      expect(third).toMatchObject({
        status: "authorized",
        attempted: false,
        payment_id: second.payment_id,
      });
      const { compared } = await expectMedusaMatchesService(shop(), orderId);
      expect(compared.map((o) => o.status).sort()).toEqual(["Expired", "NotActivated"]);
    });
  });
});
