import type { MedusaContainer } from "@medusajs/framework/types";
import { medusaIntegrationTestRunner } from "@medusajs/test-utils";
import { reconcileUnknownOutcomes } from "@purchase-auth/medusa/workflows";
import type { MerchantCredentials, SandboxServer } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cartWithCollection,
  completeCart,
  completeWithAnswerLost,
  customerWithToken,
  expectMedusaMatchesService,
  initiatePayment,
  type Shop,
} from "./support/checkout";
import { openShop, sessionsOf } from "./support/open-shop";
import { startSandboxForMedusa } from "./support/sandbox-env";
import { type Api, eventually } from "./support/store-api";

// A checkout whose authorization answer is lost (Manual capture): the session is left in Medusa's
// status `error` with `state: "unknown"`, and the cart does not complete. The service did authorize,
// and its `authorization.succeeded` webhook arrives (the sandbox sends it for synchronous successes
// too). Medusa's payment workflow cannot complete a cart on an `error` session, so nothing in Medusa
// will ever capture that hold: it must be released, whoever gets there first (the webhook, the job).

const WEBHOOK_SECRET = "whsec-unknown-late-success";
let sandbox: SandboxServer;
let merchant: MerchantCredentials;

beforeAll(async () => {
  // medusa-config.ts reads the merchant's credentials when Medusa's runner loads it (after this hook).
  ({ sandbox, merchant } = await startSandboxForMedusa(WEBHOOK_SECRET));
});

afterAll(async () => {
  await sandbox?.close();
});

medusaIntegrationTestRunner({
  dbName: "purchase-auth-medusa-unknown-late-success",
  cwd: process.cwd(),
  testSuite: ({ api: untypedApi, getContainer }) => {
    const api = untypedApi as unknown as Api & { defaults: { baseURL: string } };
    let shop: Shop;

    beforeAll(async () => {
      ({ shop } = await openShop(api, getContainer() as MedusaContainer, sandbox, merchant, WEBHOOK_SECRET));
    });

    const charged = (customerToken: string) =>
      sandbox.authorizations({ merchantId: merchant.merchantId, customerToken });
    const serviceOrder = (orderId: unknown) => sandbox.orders().find((o) => o.orderId === orderId);

    describe("a late success after an unknown checkout outcome (Manual capture)", () => {
      it("is released, not left held with no payment and no order", async () => {
        const customer = await customerWithToken(shop, "late-success@example.com");
        const { cartId, collectionId } = await cartWithCollection(shop, customer.headers);
        expect((await initiatePayment(shop, collectionId, customer.headers)).status).toBe(200);
        const failed = await completeWithAnswerLost(shop, cartId, customer.headers);
        expect(failed.data.type).not.toBe("order");
        const [held] = charged(customer.customerToken);
        expect(held?.status).toBe("Succeeded"); // the service did authorize; Medusa does not know

        // The service's authorization.succeeded reaches Medusa (after its webhook_delay).
        await sandbox.settle();
        const [session] = await eventually(async () => {
          const rows = await sessionsOf(getContainer() as MedusaContainer, collectionId);
          return rows[0] && rows[0].data.state !== "unknown" ? rows : undefined;
        });
        expect(session!.status).toBe("error"); // Medusa's cart cannot complete on it

        // Whoever settles it (the webhook itself, or the reconcile job), the hold is released.
        await reconcileUnknownOutcomes(getContainer() as MedusaContainer);
        expect(serviceOrder(held!.orderId)).toMatchObject({
          status: "Cancelled",
          capturedAmount: "0.00",
          cancelledAmount: "79.60",
        });
        const [after] = await sessionsOf(getContainer() as MedusaContainer, collectionId);
        expect(after!.data).toMatchObject({ state: "canceled", order_id: held!.orderId });

        // The storefront re-initiates (the settled session is deleted, nothing sent) and pays anew.
        expect((await initiatePayment(shop, collectionId, customer.headers)).status).toBe(200);
        const completed = await completeCart(shop, cartId, customer.headers);
        expect(completed.data.type).toBe("order");
        expect(charged(customer.customerToken)).toHaveLength(2);
        expect(serviceOrder(held!.orderId)?.status).toBe("Cancelled");
        const { compared } = await expectMedusaMatchesService(shop, completed.data.order!.id);
        expect(compared.map((o) => o.status)).toEqual(["NotActivated"]);
      });
    });
  },
});
