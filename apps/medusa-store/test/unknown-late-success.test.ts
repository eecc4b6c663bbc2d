import { reconcileUnknownOutcomes } from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import {
  cartWithCollection,
  completeCart,
  completeWithAnswerLost,
  customerWithToken,
  expectMedusaMatchesService,
  initiatePayment,
} from "./support/checkout";
import { sessionsOf } from "./support/open-shop";
import { shopSuite } from "./support/shop-suite";
import { eventually } from "./support/store-api";

// A checkout whose authorization answer is lost (Manual capture): the session is left in Medusa's
// status `error` with `state: "unknown"`, and the cart does not complete. The service did authorize,
// and its `authorization.succeeded` webhook arrives (the sandbox sends it for synchronous successes
// too). Medusa's payment workflow cannot complete a cart on an `error` session, so nothing in Medusa
// will ever capture that hold: it must be released, whoever gets there first (the webhook, the job).

shopSuite("unknown-late-success", ({ container, sandbox, shop, authorizationsOf: charged, serviceOrder }) => {
  describe("a late success after an unknown checkout outcome (Manual capture)", () => {
    it("is released, not left held with no payment and no order", async () => {
      const customer = await customerWithToken(shop(), "late-success@example.com");
      const { cartId, collectionId } = await cartWithCollection(shop(), customer.headers);
      expect((await initiatePayment(shop(), collectionId, customer.headers)).status).toBe(200);
      const failed = await completeWithAnswerLost(shop(), cartId, customer.headers);
      expect(failed.data.type).not.toBe("order");
      const [held] = charged(customer.customerToken);
      expect(held?.status).toBe("Succeeded"); // the service did authorize; Medusa does not know

      // The service's authorization.succeeded reaches Medusa (after its webhook_delay).
      await sandbox().settle();
      const [session] = await eventually(async () => {
        const rows = await sessionsOf(container(), collectionId);
        return rows[0] && rows[0].data.state !== "unknown" ? rows : undefined;
      });
      expect(session!.status).toBe("error"); // Medusa's cart cannot complete on it

      // Whoever settles it (the webhook itself, or the reconcile job), the hold is released.
      await reconcileUnknownOutcomes(container());
      expect(serviceOrder(held!.orderId)).toMatchObject({
        status: "Cancelled",
        capturedAmount: "0.00",
        cancelledAmount: "79.60",
      });
      const [after] = await sessionsOf(container(), collectionId);
      expect(after!.data).toMatchObject({ state: "canceled", order_id: held!.orderId });

      // The storefront re-initiates (the settled session is deleted, nothing sent) and pays anew.
      expect((await initiatePayment(shop(), collectionId, customer.headers)).status).toBe(200);
      const completed = await completeCart(shop(), cartId, customer.headers);
      expect(completed.data.type).toBe("order");
      expect(charged(customer.customerToken)).toHaveLength(2);
      expect(serviceOrder(held!.orderId)?.status).toBe("Cancelled");
      const { compared } = await expectMedusaMatchesService(shop(), completed.data.order!.id);
      expect(compared.map((o) => o.status)).toEqual(["NotActivated"]);
    });
  });
});
