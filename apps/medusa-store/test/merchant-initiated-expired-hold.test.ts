import type { MedusaContainer } from "@medusajs/framework/types";
import { medusaIntegrationTestRunner } from "@medusajs/test-utils";
import { chargeStoredTokenWorkflow, type StoredTokenCharge } from "@purchase-auth/medusa/workflows";
import type { MerchantCredentials, SandboxServer } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SeededStore } from "../src/scripts/seed-store";
import {
  customerWithToken,
  expectMedusaMatchesService,
  orderWithPayments,
  type Shop,
} from "./support/checkout";
import { openShop } from "./support/open-shop";
import { serverOrder } from "./support/orders";
import { startSandboxForMedusa } from "./support/sandbox-env";
import { type Api, eventually } from "./support/store-api";

// A server-created order charged with chargeStoredTokenWorkflow (Manual capture) whose hold then
// lapses at the service: Medusa follows the service's order.cancelled and cancels its payment, but
// the session's data still reads "authorized". Charging the order again must make a new attempt
// (a new session, new keys) and not report the canceled payment as authorized.

const WEBHOOK_SECRET = "whsec-merchant-initiated-expired-hold";

/** Manual-capture orders lapse after 10 virtual minutes here (30 days by default). */
const ORDER_EXPIRY_MS = 10 * 60_000;
let sandbox: SandboxServer;
let merchant: MerchantCredentials;

beforeAll(async () => {
  // medusa-config.ts reads the merchant's credentials when Medusa's runner loads it (after this hook).
  ({ sandbox, merchant } = await startSandboxForMedusa(WEBHOOK_SECRET, { orderExpiryMs: ORDER_EXPIRY_MS }));
});

afterAll(async () => {
  await sandbox?.close();
});

medusaIntegrationTestRunner({
  dbName: "purchase-auth-medusa-merchant-initiated-expired-hold",
  cwd: process.cwd(),
  testSuite: ({ api: untypedApi, getContainer }) => {
    const api = untypedApi as unknown as Api & { defaults: { baseURL: string } };
    let shop: Shop;
    let store: SeededStore;
    const container = () => getContainer() as MedusaContainer;

    beforeAll(async () => {
      ({ shop, store } = await openShop(api, container(), sandbox, merchant, WEBHOOK_SECRET));
    });

    const charge = async (orderId: string) =>
      (await chargeStoredTokenWorkflow(container()).run({ input: { order_id: orderId } }))
        .result as StoredTokenCharge;

    describe("charging an order again after its hold expired at the service", () => {
      it("makes a new attempt with a new session instead of reporting the canceled payment", async () => {
        const email = "expired-hold@example.com";
        const customer = await customerWithToken(shop, email);
        const orderId = await serverOrder(container(), store, customer.customerId, email);
        const first = await charge(orderId);
        expect(first).toMatchObject({ status: "authorized", attempted: true });

        // The hold lapses at the service; its order.cancelled webhook makes Medusa cancel the payment.
        sandbox.advanceClock(ORDER_EXPIRY_MS);
        await sandbox.settle();
        await eventually(async () => {
          const order = await orderWithPayments(shop, orderId);
          return order.payment_collections[0]!.payments[0]?.canceled_at ? order : undefined;
        });

        const second = await charge(orderId);
        expect(second).toMatchObject({ status: "authorized", attempted: true });
        expect(second.payment_id).not.toBe(first.payment_id);
        expect(second.payment_session_id).not.toBe(first.payment_session_id);
        expect(second.service_order_id).not.toBe(first.service_order_id);
        const authorizations = sandbox.authorizations({
          merchantId: merchant.merchantId,
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
        const { compared } = await expectMedusaMatchesService(shop, orderId);
        expect(compared.map((o) => o.status).sort()).toEqual(["Expired", "NotActivated"]);
      });
    });
  },
});
