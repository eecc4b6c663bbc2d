import { Modules } from "@medusajs/framework/utils";
import {
  chargeStoredTokenWorkflow,
  reconcileUnknownOutcomes,
  type StoredTokenCharge,
} from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import { PURCHASE_AUTH_PROVIDER_ID } from "../src/scripts/seed-store";
import { expectMedusaMatchesService, loseCreateAnswers, orderWithPayments } from "./support/checkout";
import { holdWebhooks } from "./support/hold-webhooks";
import { serverOrder as makeServerOrder } from "./support/orders";
import { shopSuite } from "./support/shop-suite";
import { eventually, registerCustomer } from "./support/store-api";

// Merchant-initiated charges (chargeStoredTokenWorkflow) with Auto capture and two purchase-auth
// providers configured, on the whole application, real PostgreSQL and the sandbox over HTTP: an
// auto capture recorded once on the order however the webhook and the charge interleave, and the
// reconcile job settling a charge's unknown outcome whatever provider it went through, also once
// its order was canceled; and a stored token removed whichever provider stored it (the remove routes
// take only the token), cancelled at the service there, never another customer's.

const SECOND_ID = "invoice";
const SECOND_PROVIDER_ID = `pp_purchase-auth_${SECOND_ID}`;
const SETTINGS = { PURCHASE_AUTH_CAPTURE_MODE: "Auto", PURCHASE_AUTH_SECOND_PROVIDER_ID: SECOND_ID };

shopSuite("merchant-initiated-reconcile", { env: SETTINGS }, (suite) => {
  const { api, container, sandbox, merchant, shop, store, setWebhooks, authorizationsOf, serviceOrder } =
    suite;

  /** A logged-in customer with a fresh token the admin stored for `providerId`. */
  async function customerWithTokenOf(email: string, providerId: string) {
    const customer = await registerCustomer(api, shop().publishableKey, email);
    const customerToken = sandbox().createCustomerToken({ merchantId: merchant().merchantId }).customerToken;
    const attached = await api.post(
      `/admin/customers/${customer.customerId}/purchase-auth-tokens`,
      { customer_token: customerToken, provider_id: providerId },
      { headers: shop().admin },
    );
    expect(attached.status).toBe(201);
    return { ...customer, customerToken };
  }

  const tokensOf = async (headers: Record<string, string>) =>
    (
      await api.get<{ customer_tokens: Array<{ customer_token: string; provider_id: string }> }>(
        "/store/customers/me/purchase-auth-tokens",
        { headers },
      )
    ).data.customer_tokens;

  /** A customer with an order made on the server and a token stored for `providerId`. */
  async function orderToCharge(email: string, providerId: string) {
    const { customerId, customerToken } = await customerWithTokenOf(email, providerId);
    const orderId = await makeServerOrder(container(), store(), customerId, email);
    return { customerToken, orderId };
  }

  async function charge(orderId: string, providerId: string): Promise<StoredTokenCharge> {
    const { result } = await chargeStoredTokenWorkflow(container()).run({
      input: { order_id: orderId, provider_id: providerId },
    });
    return result;
  }

  /** A charge whose answer is lost after the service committed it, its webhooks kept from Medusa. */
  async function chargeUnknown(orderId: string, providerId: string): Promise<StoredTokenCharge> {
    const sink = await holdWebhooks();
    setWebhooks([sink.url]);
    loseCreateAnswers(sandbox());
    try {
      const result = await charge(orderId, providerId);
      await sandbox().settle();
      return result;
    } finally {
      sandbox().clearFaults();
      setWebhooks();
      await sink.close();
    }
  }

  async function captureTransactions(orderId: string) {
    const orders = container().resolve(Modules.ORDER);
    const transactions = await orders.listOrderTransactions({ order_id: orderId });
    return transactions.filter((t) => t.reference === "capture");
  }

  describe("an auto capture the webhook records while the charge is in flight", () => {
    it("is recorded on the order once", async () => {
      const { customerToken, orderId } = await orderToCharge("race@example.com", PURCHASE_AUTH_PROVIDER_ID);
      // The service commits, sends authorization.succeeded, and only then answers (20 s later): the
      // webhook's payment workflow records the payment, its capture and the capture's transaction.
      sandbox().injectFault({
        kind: "delay_after_commit",
        match: { method: "POST", path: "/purchase/authorizations" },
        count: 1,
        latencyMs: 20_000,
      });
      let finished = false;
      const running = charge(orderId, PURCHASE_AUTH_PROVIDER_ID).finally(() => {
        finished = true;
      });
      try {
        const recorded = await eventually(async () => {
          const found = await captureTransactions(orderId);
          return found.length > 0 ? found : undefined;
        });
        expect(finished).toBe(false); // the webhook went first, as this case needs
        const result = await running;
        expect(result).toMatchObject({ status: "captured" });
        const transactions = await captureTransactions(orderId);
        expect(transactions.map((t) => t.reference_id)).toEqual(recorded.map((t) => t.reference_id));
      } finally {
        await running.catch(() => undefined);
        sandbox().clearFaults();
      }
      expect(authorizationsOf(customerToken)).toHaveLength(1);
      const [payment] = (await orderWithPayments(shop(), orderId)).payment_collections[0]!.payments;
      expect(payment?.captures).toHaveLength(1);
      await expectMedusaMatchesService(shop(), orderId);
    });
  });

  describe("the reconcile job and a charge's unknown outcome", () => {
    it("repeats it through the provider the session used when several are configured", async () => {
      const { customerToken, orderId } = await orderToCharge("second@example.com", SECOND_PROVIDER_ID);
      const lost = await chargeUnknown(orderId, SECOND_PROVIDER_ID);
      expect(lost).toMatchObject({ status: "unknown", payment_id: null });

      const report = await reconcileUnknownOutcomes(container());
      expect(report.resolved).toContain(lost.payment_session_id);
      const [held] = authorizationsOf(customerToken);
      const order = await orderWithPayments(shop(), orderId);
      expect(order.payment_collections[0]!.payments).toHaveLength(1);
      expect(order.payment_collections[0]!.payments[0]).toMatchObject({ provider_id: SECOND_PROVIDER_ID });
      expect(serviceOrder(held!.orderId)).toMatchObject({ status: "Activated" });
      expect(authorizationsOf(customerToken)).toHaveLength(1);
      await expectMedusaMatchesService(shop(), orderId);
    });

    it("releases what the service captured once the order was canceled", async () => {
      const { customerToken, orderId } = await orderToCharge(
        "canceled@example.com",
        PURCHASE_AUTH_PROVIDER_ID,
      );
      const lost = await chargeUnknown(orderId, PURCHASE_AUTH_PROVIDER_ID);
      expect(lost).toMatchObject({ status: "unknown", payment_id: null });
      const [held] = authorizationsOf(customerToken);
      const total = serviceOrder(held!.orderId)!.totalAmount;
      expect(serviceOrder(held!.orderId)).toMatchObject({ capturedAmount: total }); // Auto: captured

      const canceled = await api.post(`/admin/orders/${orderId}/cancel`, {}, { headers: shop().admin });
      expect(canceled.status).toBe(200);
      const report = await reconcileUnknownOutcomes(container());
      expect(report.resolved).toContain(lost.payment_session_id);
      expect(serviceOrder(held!.orderId)).toMatchObject({ capturedAmount: total, refundedAmount: total });
      const order = await orderWithPayments(shop(), orderId);
      expect(order.payment_collections[0]!.payments).toEqual([]);
      expect(order.payment_collections[0]!.payment_sessions[0]!.data).toMatchObject({
        state: "canceled",
        order_id: held!.orderId,
      });
      // A later run has nothing left to do for it.
      const again = await reconcileUnknownOutcomes(container());
      expect([...again.resolved, ...again.stillUnknown, ...again.flagged]).not.toContain(
        lost.payment_session_id,
      );
    });
  });

  describe("removing a stored token with two purchase-auth providers configured", () => {
    it("the customer removes it whichever provider stored it; it is cancelled at the service", async () => {
      const customer = await customerWithTokenOf("two-providers-store@example.com", SECOND_PROVIDER_ID);
      const other = await customerWithTokenOf("two-providers-first@example.com", PURCHASE_AUTH_PROVIDER_ID);
      expect(await tokensOf(customer.headers)).toMatchObject([
        { customer_token: customer.customerToken, provider_id: SECOND_PROVIDER_ID },
      ]);

      // Another customer's token is not theirs to remove, whatever provider stored it.
      const notMine = await api.delete(`/store/customers/me/purchase-auth-tokens/${other.customerToken}`, {
        headers: customer.headers,
        validateStatus: () => true,
      });
      expect(notMine.status).toBe(404);
      expect(sandbox().getCustomerToken(other.customerToken).status).toBe("Active");

      const removed = await api.delete(`/store/customers/me/purchase-auth-tokens/${customer.customerToken}`, {
        headers: customer.headers,
        validateStatus: () => true,
      });
      expect(removed.status).toBe(200);
      expect(removed.data).toMatchObject({ id: customer.customerToken, deleted: true });
      expect(sandbox().getCustomerToken(customer.customerToken).status).toBe("Cancelled");
      expect(await tokensOf(customer.headers)).toEqual([]);
      expect(await tokensOf(other.headers)).toHaveLength(1);
    });

    it("the admin removes a customer's token without naming the provider", async () => {
      const customer = await customerWithTokenOf(
        "two-providers-admin@example.com",
        PURCHASE_AUTH_PROVIDER_ID,
      );
      const url = `/admin/customers/${customer.customerId}/purchase-auth-tokens/${customer.customerToken}`;
      const removed = await api.delete(url, { headers: shop().admin, validateStatus: () => true });
      expect(removed.status).toBe(200);
      expect(removed.data).toMatchObject({ id: customer.customerToken, deleted: true });
      expect(sandbox().getCustomerToken(customer.customerToken).status).toBe("Cancelled");
      expect(await tokensOf(customer.headers)).toEqual([]);

      // Removed already: nothing is stored any more.
      const again = await api.delete(url, { headers: shop().admin, validateStatus: () => true });
      expect(again.status).toBe(404);
    });
  });
});
