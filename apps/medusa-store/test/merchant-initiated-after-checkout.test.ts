import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { chargeStoredTokenWorkflow, type StoredTokenCharge } from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import {
  cartWithCollection,
  completeCart,
  customerWithToken,
  expectMedusaMatchesService,
  initiatePayment,
  loseCreateAnswers,
  orderOnceFollowed,
  orderWithPayments,
} from "./support/checkout";
import { holdWebhooks } from "./support/hold-webhooks";
import { shopSuite } from "./support/shop-suite";
import { eventually } from "./support/store-api";

// A placed order whose checkout authorization was answered 202 and then failed, charged by the
// merchant's code with chargeStoredTokenWorkflow (Manual capture). The workflow reuses the completed
// cart's payment collection, which stays linked to the cart and is linked to the order. When the
// charge's answer is lost (an unknown outcome, Medusa's session status `error`), the service's late
// `authorization.succeeded` pays the order: Medusa records the payment, the service's order stays
// held. It is not a checkout nothing could complete on, whose success would be released.

interface SessionRow {
  id: string;
  status: string;
  payment_collection_id: string;
  data: Record<string, unknown>;
}

shopSuite("merchant-initiated-after-checkout", (suite) => {
  const { api, container, sandbox, shop, webhookUrl, setWebhooks, authorizationsOf, serviceOrder } = suite;

  async function sessionRow(sessionId: string): Promise<SessionRow | undefined> {
    const knex = container().resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as {
      raw(sql: string, bindings: unknown[]): Promise<{ rows: SessionRow[] }>;
    };
    const { rows } = await knex.raw(
      "select id, status, payment_collection_id, data from payment_session where id = ? and deleted_at is null",
      [sessionId],
    );
    return rows[0];
  }

  /**
   * The charge workflow for `orderId` while every answer to a create is lost after the service
   * committed it, the webhooks it causes held back from Medusa (the caller delivers them).
   */
  async function chargeWithAnswersLost(orderId: string) {
    const held = await holdWebhooks();
    setWebhooks([held.url]);
    loseCreateAnswers(sandbox());
    try {
      const { result } = await chargeStoredTokenWorkflow(container()).run({ input: { order_id: orderId } });
      await sandbox().settle();
      return { result: result as StoredTokenCharge, held: held.received };
    } finally {
      sandbox().clearFaults();
      setWebhooks();
      await held.close();
    }
  }

  describe("a late success of a charge on a placed order's checkout collection (Manual capture)", () => {
    it("is recorded on the order, not released as a stranded checkout", async () => {
      // Checkout: the service answers 202 and later fails the authorization; the cart completes.
      const customer = await customerWithToken(shop(), "charge-after-checkout@example.com", {
        needsChallenge: true,
      });
      sandbox().updateCustomerToken(customer.customerToken, { failureReason: "PAYMENT_FAILED" });
      const { cartId, collectionId } = await cartWithCollection(shop(), customer.headers);
      expect((await initiatePayment(shop(), collectionId, customer.headers)).status).toBe(200);
      const completed = await completeCart(shop(), cartId, customer.headers);
      expect(completed.data.type).toBe("order");
      const orderId = completed.data.order!.id;
      await sandbox().settle();
      const failed = await orderOnceFollowed(shop(), orderId, {
        sessionState: "failed",
        collectionStatus: "failed",
      });
      expect(failed.payment_collections.map((c) => c.id)).toEqual([collectionId]);
      expect(failed.payment_collections[0]!.payments).toEqual([]);
      expect(authorizationsOf(customer.customerToken).map((a) => a.status)).toEqual(["Failed"]);

      // The merchant's code charges the order; the charge's answer is lost.
      sandbox().updateCustomerToken(customer.customerToken, { failureReason: null, needsChallenge: false });
      const { result: lost, held } = await chargeWithAnswersLost(orderId);
      expect(lost).toMatchObject({
        status: "unknown",
        payment_id: null,
        payment_collection_id: collectionId,
      });
      const session = await sessionRow(lost.payment_session_id!);
      expect(session).toMatchObject({ status: "error", payment_collection_id: collectionId });
      expect(session!.data.state).toBe("unknown");
      const succeeded = authorizationsOf(customer.customerToken).find((a) => a.status === "Succeeded");
      expect(succeeded).toMatchObject({ actionReference: lost.payment_session_id });
      expect(serviceOrder(succeeded!.orderId)).toMatchObject({ status: "NotActivated" });

      // The service's authorization.succeeded for the charge reaches Medusa.
      const success = held.find(
        (delivery) =>
          delivery.type === "authorization.succeeded" && delivery.body.includes(succeeded!.authorizationId),
      );
      expect(success).toBeDefined();
      const delivered = await api.post(webhookUrl(), success!.body, {
        headers: { ...success!.headers, "content-type": "application/json" },
      });
      expect(delivered.status).toBe(200);

      // Either Medusa records the payment or the plugin releases the service's order: wait for
      // whichever happens, then say which it was.
      await eventually(async () => {
        const order = await orderWithPayments(shop(), orderId);
        if (order.payment_collections[0]!.payments.length > 0) return order;
        return serviceOrder(succeeded!.orderId)?.status === "Cancelled" ? order : undefined;
      });
      expect(serviceOrder(succeeded!.orderId)).toMatchObject({
        status: "NotActivated",
        cancelledAmount: "0.00",
      });
      const { order, compared } = await expectMedusaMatchesService(shop(), orderId);
      expect(order.payment_collections[0]!.payments).toHaveLength(1);
      expect(order.payment_collections[0]!.payments[0]!.data).toMatchObject({
        session_id: lost.payment_session_id,
        order_id: succeeded!.orderId,
      });
      expect(compared.map((o) => o.status)).toEqual(["NotActivated"]);
      expect(authorizationsOf(customer.customerToken)).toHaveLength(2);
    });
  });
});
