import type { MedusaContainer } from "@medusajs/framework/types";
import { medusaIntegrationTestRunner } from "@medusajs/test-utils";
import type { MerchantCredentials, SandboxServer } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PURCHASE_AUTH_PROVIDER_ID } from "../src/scripts/seed-store";
import type { Shop } from "./support/checkout";
import { openShop } from "./support/open-shop";
import { startSandboxForMedusa } from "./support/sandbox-env";
import { type Api, registerCustomer } from "./support/store-api";

// Stored tokens with two purchase-auth providers configured, on the whole application: the remove
// routes take only the token, so the plugin finds which of the customer's account holders stores it
// (whatever provider) and removes and cancels it there, never another customer's.

const WEBHOOK_SECRET = "whsec-two-providers-stored-tokens";
const SECOND_ID = "invoice";
const SECOND_PROVIDER_ID = `pp_purchase-auth_${SECOND_ID}`;
const SETTINGS = { PURCHASE_AUTH_SECOND_PROVIDER_ID: SECOND_ID };
let sandbox: SandboxServer;
let merchant: MerchantCredentials;

beforeAll(async () => {
  // medusa-config.ts reads these when Medusa's runner loads it (after this hook).
  ({ sandbox, merchant } = await startSandboxForMedusa(WEBHOOK_SECRET));
  Object.assign(process.env, SETTINGS);
});

afterAll(async () => {
  for (const name of Object.keys(SETTINGS)) delete process.env[name];
  await sandbox?.close();
});

medusaIntegrationTestRunner({
  dbName: "purchase-auth-medusa-two-providers-stored-tokens",
  cwd: process.cwd(),
  testSuite: ({ api: untypedApi, getContainer }) => {
    const api = untypedApi as unknown as Api & { defaults: { baseURL: string } };
    let shop: Shop;

    beforeAll(async () => {
      ({ shop } = await openShop(api, getContainer() as MedusaContainer, sandbox, merchant, WEBHOOK_SECRET));
    });

    /** A logged-in customer with a fresh token the admin stored for `providerId`. */
    async function customerWithTokenOf(email: string, providerId: string) {
      const customer = await registerCustomer(api, shop.publishableKey, email);
      const customerToken = sandbox.createCustomerToken({ merchantId: merchant.merchantId }).customerToken;
      const attached = await api.post(
        `/admin/customers/${customer.customerId}/purchase-auth-tokens`,
        { customer_token: customerToken, provider_id: providerId },
        { headers: shop.admin },
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
        expect(sandbox.getCustomerToken(other.customerToken).status).toBe("Active");

        const removed = await api.delete(
          `/store/customers/me/purchase-auth-tokens/${customer.customerToken}`,
          {
            headers: customer.headers,
            validateStatus: () => true,
          },
        );
        expect(removed.status).toBe(200);
        expect(removed.data).toMatchObject({ id: customer.customerToken, deleted: true });
        expect(sandbox.getCustomerToken(customer.customerToken).status).toBe("Cancelled");
        expect(await tokensOf(customer.headers)).toEqual([]);
        expect(await tokensOf(other.headers)).toHaveLength(1);
      });

      it("the admin removes a customer's token without naming the provider", async () => {
        const customer = await customerWithTokenOf(
          "two-providers-admin@example.com",
          PURCHASE_AUTH_PROVIDER_ID,
        );
        const url = `/admin/customers/${customer.customerId}/purchase-auth-tokens/${customer.customerToken}`;
        const removed = await api.delete(url, { headers: shop.admin, validateStatus: () => true });
        expect(removed.status).toBe(200);
        expect(removed.data).toMatchObject({ id: customer.customerToken, deleted: true });
        expect(sandbox.getCustomerToken(customer.customerToken).status).toBe("Cancelled");
        expect(await tokensOf(customer.headers)).toEqual([]);

        // Removed already: nothing is stored any more.
        const again = await api.delete(url, { headers: shop.admin, validateStatus: () => true });
        expect(again.status).toBe(404);
      });
    });
  },
});
