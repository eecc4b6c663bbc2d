import type { MedusaContainer } from "@medusajs/framework/types";
import { medusaIntegrationTestRunner } from "@medusajs/test-utils";
import type { MerchantCredentials, SandboxServer } from "@purchase-auth/sandbox";
import { afterAll, beforeAll } from "vitest";
import type { Shop } from "./checkout";
import { openShop, webhookUrlOf } from "./open-shop";
import { startSandboxForMedusa } from "./sandbox-env";
import type { Api } from "./store-api";

/** What a test file's suite runs against: a real Medusa on its own database, a sandbox, the shop. */
export interface ShopSuite {
  api: Api & { defaults: { baseURL: string } };
  container: () => MedusaContainer;
  sandbox: () => SandboxServer;
  merchant: () => MerchantCredentials;
  shop: () => Shop;
  dbName: string;
  webhookSecret: string;
  /** Where the sandbox sends the merchant's webhooks when a test does not hold them. */
  webhookUrl: () => string;
}

/**
 * A test file's suite on a store of its own, named `name`: a sandbox with one merchant (started
 * first, since medusa-config.ts reads the merchant's credentials when Medusa's runner loads it),
 * Medusa on database `purchase-auth-medusa-<name>`, and the seeded shop, opened before the tests.
 */
export function shopSuite(name: string, suite: (context: ShopSuite) => void): void {
  const webhookSecret = `whsec-${name}`;
  const dbName = `purchase-auth-medusa-${name}`;
  let sandbox: SandboxServer;
  let merchant: MerchantCredentials;
  beforeAll(async () => {
    ({ sandbox, merchant } = await startSandboxForMedusa(webhookSecret));
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  medusaIntegrationTestRunner({
    dbName,
    cwd: process.cwd(),
    testSuite: ({ api: untypedApi, getContainer }) => {
      const api = untypedApi as unknown as ShopSuite["api"];
      const container = () => getContainer() as MedusaContainer;
      let shop: Shop;
      beforeAll(async () => {
        ({ shop } = await openShop(api, container(), sandbox, merchant, webhookSecret));
      });
      suite({
        api,
        container,
        sandbox: () => sandbox,
        merchant: () => merchant,
        shop: () => shop,
        dbName,
        webhookSecret,
        webhookUrl: () => webhookUrlOf(api),
      });
    },
  });
}
