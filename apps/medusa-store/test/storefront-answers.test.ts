import { describe, expect, it } from "vitest";
import { PURCHASE_AUTH_PROVIDER_ID } from "../src/scripts/seed-store";
import { cartWithCollection, customerWithToken, expectMedusaMatchesService } from "./support/checkout";
import { shopSuite } from "./support/shop-suite";

// What a storefront sees, the facts the README's "Paying from Medusa's Next.js starter" builds on,
// on Medusa 2.21.2, PostgreSQL and the sandbox: the answers of cart completion after a decline and
// after an unknown outcome, the session data a storefront shows the token from, and that
// re-initiating the payment session (the starter's fix) then pays exactly once.

interface Session {
  id: string;
  status: string;
  provider_id: string;
  data: Record<string, unknown>;
}

// No webhooks from the sandbox: the store learns only what the service answers.
shopSuite("storefront-answers", { webhooks: false }, ({ api, sandbox, shop, authorizationsOf: charged }) => {
  // What the starter's initiatePaymentSession sends: the provider and the chosen token.
  const initiate = (collectionId: string, headers: Record<string, string>, customerToken: string) =>
    api.post(
      `/store/payment-collections/${collectionId}/payment-sessions`,
      { provider_id: PURCHASE_AUTH_PROVIDER_ID, data: { customer_token: customerToken } },
      { headers, validateStatus: () => true },
    );
  const complete = (cartId: string, headers: Record<string, string>) =>
    api.post<{
      type: string;
      order?: { id: string };
      error?: { type: string; message: string };
      message?: string;
    }>(`/store/carts/${cartId}/complete`, {}, { headers, validateStatus: () => true });
  const sessions = async (cartId: string, headers: Record<string, string>) => {
    const { data } = await api.get<{ cart: { payment_collection: { payment_sessions: Session[] } } }>(
      `/store/carts/${cartId}?fields=*payment_collection.payment_sessions`,
      { headers },
    );
    return data.cart.payment_collection.payment_sessions;
  };

  describe("cart completion as a storefront sees it", () => {
    it("a decline answers 200 { type: 'cart', error }; re-initiating after the cause is fixed places the order", async () => {
      const customer = await customerWithToken(shop(), "decline@example.com", { funds: "1.00" });
      const { cartId, collectionId } = await cartWithCollection(shop(), customer.headers);
      expect((await initiate(collectionId, customer.headers, customer.customerToken)).status).toBe(200);

      // The session data a storefront may show the token from (masked: its last four characters).
      const [opened] = await sessions(cartId, customer.headers);
      expect(opened).toMatchObject({ status: "pending", data: { customer_token: customer.customerToken } });

      const declined = await complete(cartId, customer.headers);
      expect(declined.status).toBe(200);
      expect(declined.data.type).toBe("cart");
      expect(declined.data.error).toMatchObject({ type: "payment_authorization_error" });
      expect(declined.data.error!.message).toMatch(/declined.*PAYMENT_METHOD_NO_FUNDS/);

      // The customer tops up; the storefront re-initiates with the same token and completes.
      sandbox().updateCustomerToken(customer.customerToken, { funds: null });
      expect((await initiate(collectionId, customer.headers, customer.customerToken)).status).toBe(200);
      const reopened = await sessions(cartId, customer.headers);
      expect(reopened).toHaveLength(1);
      expect(reopened[0]!.id).not.toBe(opened!.id);
      const placed = await complete(cartId, customer.headers);
      expect(placed.data.type).toBe("order");
      expect(charged(customer.customerToken).map((a) => a.status)).toEqual(["Failed", "Succeeded"]);
      await expectMedusaMatchesService(shop(), placed.data.order!.id);
    });

    it("an unknown outcome answers 400 and leaves the session in error; re-initiating pays exactly once", async () => {
      const customer = await customerWithToken(shop(), "unknown-outcome@example.com");
      const { cartId, collectionId } = await cartWithCollection(shop(), customer.headers);
      expect((await initiate(collectionId, customer.headers, customer.customerToken)).status).toBe(200);
      sandbox().injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: "/purchase/authorizations" },
        count: null,
      });
      let lost: Awaited<ReturnType<typeof complete>>;
      try {
        lost = await complete(cartId, customer.headers);
      } finally {
        sandbox().clearFaults();
      }
      expect(lost.status).toBe(400);
      expect(lost.data.message).toMatch(/was not authorized with the provider/);
      const [stuck] = await sessions(cartId, customer.headers);
      expect(stuck).toMatchObject({ status: "error", data: { state: "unknown" } });
      expect(charged(customer.customerToken).map((a) => a.status)).toEqual(["Succeeded"]);

      // Completing the same session again does not help (Medusa never re-authorizes an error).
      expect((await complete(cartId, customer.headers)).data.type).not.toBe("order");

      // The starter's fix: re-initiate. The first attempt is settled with its key and released.
      expect((await initiate(collectionId, customer.headers, customer.customerToken)).status).toBe(200);
      const placed = await complete(cartId, customer.headers);
      expect(placed.data.type).toBe("order");
      const [first, second] = charged(customer.customerToken);
      expect(sandbox().orders({ authorizationId: first!.authorizationId })[0]).toMatchObject({
        status: "Cancelled",
        capturedAmount: "0.00",
      });
      expect(second?.status).toBe("Succeeded");
      const { compared } = await expectMedusaMatchesService(shop(), placed.data.order!.id);
      expect(compared.map((o) => o.status)).toEqual(["NotActivated"]);
    });
  });
});
