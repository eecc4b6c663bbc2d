import { reconcileUnknownOutcomes } from "@purchase-auth/medusa/workflows";
import { describe, expect, it } from "vitest";
import { checkoutWithAnswerLost, payAnewAfterRelease } from "./support/checkout";
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
      // The service did authorize; Medusa does not know.
      const checkout = await checkoutWithAnswerLost(shop(), "late-success@example.com", charged);
      const { collectionId, held } = checkout;

      // The service's authorization.succeeded reaches Medusa (after its webhook_delay).
      await sandbox().settle();
      const [session] = await eventually(async () => {
        const rows = await sessionsOf(container(), collectionId);
        return rows[0] && rows[0].data.state !== "unknown" ? rows : undefined;
      });
      expect(session!.status).toBe("error"); // Medusa's cart cannot complete on it

      // Whoever settles it (the webhook itself, or the reconcile job), the hold is released.
      await reconcileUnknownOutcomes(container());
      expect(serviceOrder(held.orderId)).toMatchObject({
        status: "Cancelled",
        capturedAmount: "0.00",
        cancelledAmount: "79.60",
      });
      const [after] = await sessionsOf(container(), collectionId);
      expect(after!.data).toMatchObject({ state: "canceled", order_id: held.orderId });

      await payAnewAfterRelease(shop(), checkout, charged);
      expect(serviceOrder(held.orderId)?.status).toBe("Cancelled");
    });
  });
});
