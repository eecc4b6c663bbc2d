import type { MedusaContainer } from "@medusajs/framework/types";
import { medusaIntegrationTestRunner } from "@medusajs/test-utils";
import type {
  AuthorizationView,
  MerchantCredentials,
  OrderView,
  SandboxOptions,
  SandboxServer,
} from "@purchase-auth/sandbox";
import { afterAll, beforeAll } from "vitest";
import type { SeededStore } from "../../src/scripts/seed-store";
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
  /** The seeded store's ids: the shop's, and the sales channel an order made on the server needs. */
  store: () => SeededStore;
  dbName: string;
  webhookSecret: string;
  /** Where the sandbox sends the merchant's webhooks when a test does not hold them. */
  webhookUrl: () => string;
  /** Has the sandbox send the merchant's webhooks, signed with webhookSecret, to `urls` (by default webhookUrl()). */
  setWebhooks: (urls?: string[]) => void;
  /** The service's authorizations of the merchant with `customerToken`, as the sandbox holds them. */
  authorizationsOf: (customerToken: string) => AuthorizationView[];
  /** The service's order `orderId`, as the sandbox holds it. */
  serviceOrder: (orderId: unknown) => OrderView | undefined;
}

/** A test file's describes, its, and hooks, given the suite. */
type Tests = (suite: ShopSuite) => void;

/** How a file's store differs from the usual one; every option may be left out. */
export interface ShopSuiteOptions {
  /** The sandbox's options, e.g. a shorter order expiry. */
  sandbox?: SandboxOptions;
  /** More environment for medusa-config.ts (e.g. the capture mode), removed again after the file. */
  env?: Record<string, string>;
  /** false: the sandbox sends the store no webhooks until a test sets them (by default it does). */
  webhooks?: boolean;
}

/**
 * A test file's suite on a store of its own, named `name`: a sandbox with one merchant (started
 * first, since medusa-config.ts reads the merchant's credentials, and `options.env`, when Medusa's
 * runner loads it), Medusa on database `purchase-auth-medusa-<name>`, and the seeded shop, opened
 * before the tests. `options` (before the callback) says how the store differs from the usual one.
 */
export function shopSuite(name: string, tests: Tests): void;
export function shopSuite(name: string, options: ShopSuiteOptions, tests: Tests): void;
export function shopSuite(name: string, ...args: [Tests] | [ShopSuiteOptions, Tests]): void {
  const [options, tests] = args.length === 1 ? [{}, args[0]] : args;
  const webhookSecret = `whsec-${name}`;
  const dbName = `purchase-auth-medusa-${name}`;
  let sandbox: SandboxServer;
  let merchant: MerchantCredentials;
  beforeAll(async () => {
    ({ sandbox, merchant } = await startSandboxForMedusa(webhookSecret, options.sandbox));
    Object.assign(process.env, options.env);
  });
  afterAll(async () => {
    for (const variable of Object.keys(options.env ?? {})) delete process.env[variable];
    await sandbox?.close();
  });
  medusaIntegrationTestRunner({
    dbName,
    cwd: process.cwd(),
    testSuite: ({ api: untypedApi, getContainer }) => {
      const api = untypedApi as unknown as ShopSuite["api"];
      const container = () => getContainer() as MedusaContainer;
      const webhookUrl = () => webhookUrlOf(api);
      const setWebhooks = (urls = [webhookUrl()]) => {
        sandbox.setWebhooks({ merchantId: merchant.merchantId, urls, secrets: [webhookSecret] });
      };
      let shop: Shop;
      let store: SeededStore;
      beforeAll(async () => {
        ({ shop, store } = await openShop(api, container(), sandbox, merchant, webhookSecret));
        if (options.webhooks === false) setWebhooks([]);
      });
      tests({
        api,
        container,
        sandbox: () => sandbox,
        merchant: () => merchant,
        shop: () => shop,
        store: () => store,
        dbName,
        webhookSecret,
        webhookUrl,
        setWebhooks,
        authorizationsOf: (customerToken) =>
          sandbox.authorizations({ merchantId: merchant.merchantId, customerToken }),
        serviceOrder: (orderId) => sandbox.orders().find((order) => order.orderId === orderId),
      });
    },
  });
}
