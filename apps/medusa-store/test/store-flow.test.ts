import { describe, expect, it } from "vitest";
import { PURCHASE_AUTH_PROVIDER_ID } from "../src/scripts/seed-store";
import { ADDRESS } from "./support/checkout";
import { shopSuite } from "./support/shop-suite";
import { eventually, registerCustomer } from "./support/store-api";

// The whole application, booted from medusa-config.ts with the plugin installed as its README says,
// on PostgreSQL, against the sandbox over HTTP; driven through Medusa's store and admin HTTP API.

interface Cart {
  id: string;
  total: number;
  payment_collection?: { id: string };
}

shopSuite("store-flow", ({ api, sandbox, merchant, shop, store }) => {
  /** A logged-in customer with a customer token the admin attached; a cart ready to pay. */
  async function customerWithCart(email: string, token: { needsChallenge?: boolean } = {}) {
    const customer = await registerCustomer(api, store().publishableKey, email);
    const customerToken = sandbox().createCustomerToken({
      merchantId: merchant().merchantId,
      ...token,
    }).customerToken;
    const attached = await api.post(
      `/admin/customers/${customer.customerId}/purchase-auth-tokens`,
      { customer_token: customerToken },
      { headers: shop().admin },
    );
    expect(attached.status).toBe(201);

    const address = ADDRESS;
    const created = await api.post<{ cart: Cart }>(
      "/store/carts",
      {
        region_id: store().regionId,
        items: [{ variant_id: store().variantId, quantity: 3 }],
        shipping_address: address,
        billing_address: address,
      },
      { headers: customer.headers },
    );
    const cartId = created.data.cart.id;
    await api.post(
      `/store/carts/${cartId}/shipping-methods`,
      { option_id: store().shippingOptionId },
      { headers: customer.headers },
    );
    const collection = await api.post<{ payment_collection: { id: string } }>(
      "/store/payment-collections",
      { cart_id: cartId },
      { headers: customer.headers },
    );
    return { customer, customerToken, cartId, collectionId: collection.data.payment_collection.id };
  }

  async function orderPayments(orderId: string) {
    const { data } = await api.get<{
      order: {
        payment_collections: Array<{
          payments: Array<{ id: string; data: Record<string, unknown>; captured_at: string | null }>;
        }>;
      };
    }>(`/admin/orders/${orderId}?fields=*payment_collections,*payment_collections.payments`, {
      headers: shop().admin,
    });
    return data.order.payment_collections.flatMap((collection) => collection.payments);
  }

  describe("a logged-in customer pays with a stored customer token", () => {
    it("cart → payment session → order, then the admin captures and refunds", async () => {
      const { customer, customerToken, cartId, collectionId } = await customerWithCart("greta@example.com");

      const listed = await api.get<{
        customer_tokens: Array<{ customer_token: string; currency: string }>;
      }>("/store/customers/me/purchase-auth-tokens", { headers: customer.headers });
      expect(listed.data.customer_tokens).toEqual([
        expect.objectContaining({
          customer_token: customerToken,
          currency: "EUR",
          provider_id: PURCHASE_AUTH_PROVIDER_ID,
        }),
      ]);

      // Another customer's token named by the storefront is refused.
      const stranger = sandbox().createCustomerToken({ merchantId: merchant().merchantId }).customerToken;
      const refused = await api.post(
        `/store/payment-collections/${collectionId}/payment-sessions`,
        { provider_id: PURCHASE_AUTH_PROVIDER_ID, data: { customer_token: stranger } },
        { headers: customer.headers, validateStatus: () => true },
      );
      expect(refused.status).toBeGreaterThanOrEqual(400);
      // Nor can the customer remove (and so cancel) a token that is not theirs.
      const notMine = await api.delete(`/store/customers/me/purchase-auth-tokens/${stranger}`, {
        headers: customer.headers,
        validateStatus: () => true,
      });
      expect(notMine.status).toBe(404);
      expect(sandbox().getCustomerToken(stranger).status).toBe("Active");

      const session = await api.post<{
        payment_collection: { payment_sessions: Array<{ id: string; data: Record<string, unknown> }> };
      }>(
        `/store/payment-collections/${collectionId}/payment-sessions`,
        { provider_id: PURCHASE_AUTH_PROVIDER_ID, data: {} },
        { headers: customer.headers },
      );
      const sessionData = session.data.payment_collection.payment_sessions[0]!.data;
      expect(sessionData).toMatchObject({
        customer_token: customerToken,
        amount: "79.60",
        currency: "EUR",
      });
      expect(JSON.stringify(sessionData)).not.toContain(merchant().clientSecret);

      const completed = await api.post<{ type: string; order: { id: string; total: number } }>(
        `/store/carts/${cartId}/complete`,
        {},
        { headers: customer.headers },
      );
      expect(completed.data.type).toBe("order");
      const orderId = completed.data.order.id;

      // The cart's lines went to the service with their VAT, adding up exactly to the amount.
      const [authorization] = sandbox().authorizations({ merchantId: merchant().merchantId, customerToken });
      expect(authorization).toMatchObject({
        amount: "79.60",
        currency: "EUR",
        captureMode: "Manual",
        reference: cartId,
      });
      const [serviceOrder] = sandbox().orders({ authorizationId: authorization!.authorizationId });
      expect(serviceOrder?.items).toEqual([
        {
          id: "COFFEE-1KG-MEDIUM",
          description: "Coffee beans 1 kg",
          unitPrice: "24.90",
          quantity: "3",
          vat: "25.00",
        },
        expect.objectContaining({
          description: "Standard",
          unitPrice: "4.90",
          quantity: "1",
          vat: "25.00",
        }),
      ]);

      // Completing again (a storefront retry) returns the same order and charges nothing more.
      const again = await api.post<{ order: { id: string } }>(
        `/store/carts/${cartId}/complete`,
        {},
        { headers: customer.headers },
      );
      expect(again.data.order.id).toBe(orderId);
      expect(sandbox().authorizations({ merchantId: merchant().merchantId, customerToken })).toHaveLength(1);

      const [payment] = await orderPayments(orderId);
      expect(payment?.data).toMatchObject({ state: "authorized", order_id: serviceOrder!.orderId });
      await api.post(`/admin/payments/${payment!.id}/capture`, { amount: 50 }, { headers: shop().admin });
      expect(sandbox().orders({ authorizationId: authorization!.authorizationId })[0]).toMatchObject({
        status: "PartActivated",
        capturedAmount: "50.00",
      });
      // The rest (Medusa's capture without an amount means the whole payment, so the rest is named).
      await api.post(`/admin/payments/${payment!.id}/capture`, { amount: 29.6 }, { headers: shop().admin });
      await api.post(`/admin/payments/${payment!.id}/refund`, { amount: 10.5 }, { headers: shop().admin });
      expect(sandbox().orders({ authorizationId: authorization!.authorizationId })[0]).toMatchObject({
        status: "PartReturned",
        capturedAmount: "79.60",
        refundedAmount: "10.50",
      });

      // The customer removes the token: it is forgotten and cancelled at the service.
      const removed = await api.delete(`/store/customers/me/purchase-auth-tokens/${customerToken}`, {
        headers: customer.headers,
      });
      expect(removed.data).toMatchObject({ id: customerToken, deleted: true });
      expect(sandbox().getCustomerToken(customerToken).status).toBe("Cancelled");
      const after = await api.get<{ customer_tokens: unknown[] }>(
        "/store/customers/me/purchase-auth-tokens",
        {
          headers: customer.headers,
        },
      );
      expect(after.data.customer_tokens).toEqual([]);
    });
  });

  describe("the webhook route", () => {
    it("a 202 authorization completes the order later, through the signed webhook Medusa receives", async () => {
      // Every event twice, newest first: duplicates and late arrivals must be harmless.
      sandbox().setWebhookDelivery({ duplicate: true, outOfOrder: true });
      // This token needs a challenge: the synchronous attempt is answered 202.
      const { customer, customerToken, cartId, collectionId } = await customerWithCart("ingrid@example.com", {
        needsChallenge: true,
      });
      await api.post(
        `/store/payment-collections/${collectionId}/payment-sessions`,
        { provider_id: PURCHASE_AUTH_PROVIDER_ID, data: {} },
        { headers: customer.headers },
      );
      const completed = await api.post<{ type: string; order: { id: string; payment_status: string } }>(
        `/store/carts/${cartId}/complete`,
        {},
        { headers: customer.headers },
      );
      expect(completed.data.type).toBe("order");
      expect(await orderPayments(completed.data.order.id)).toEqual([]);

      // The sandbox attempts at once and posts authorization.succeeded to /hooks/payment/...; Medusa
      // verifies it through the provider and authorizes the session after its webhook delay.
      await sandbox().settle();
      const delivered = sandbox()
        .webhookDeliveries()
        .filter(
          (delivery) => delivery.type === "authorization.succeeded" && delivery.outcome === "delivered",
        );
      expect(delivered.length).toBeGreaterThan(0);
      const [payment] = await eventually(async () => {
        const payments = await orderPayments(completed.data.order.id);
        return payments.length > 0 ? payments : undefined;
      });
      const [authorization] = sandbox().authorizations({ merchantId: merchant().merchantId, customerToken });
      expect(payment?.data).toMatchObject({ state: "authorized", order_id: authorization?.orderId });
      expect(sandbox().authorizations({ merchantId: merchant().merchantId, customerToken })).toHaveLength(1);
      // The second copy of the event was processed too (after Medusa's delay) and changed nothing.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await orderPayments(completed.data.order.id)).toHaveLength(1);

      // An event whose signature does not verify is acknowledged by Medusa's route but changes nothing.
      const forged = await api.post(
        "/hooks/payment/purchase-auth_purchase-auth",
        { id: "00000000-0000-4000-8000-000000000000", type: "authorization.succeeded", data: {} },
        {
          headers: {
            "service-webhook-id": "x",
            "service-webhook-timestamp": "1",
            "service-webhook-signature": "v1=00",
          },
        },
      );
      expect(forged.status).toBe(200);
    });
  });
});
