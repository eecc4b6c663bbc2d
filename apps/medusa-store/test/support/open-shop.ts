import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import type { MerchantCredentials, SandboxServer } from "@purchase-auth/sandbox";
import { type SeededStore, seedStore } from "../../src/scripts/seed-store";
import type { Shop } from "./checkout";
import { type Api, loginAdmin } from "./store-api";

/** Where the plugin's provider (id `purchase-auth`) receives the service's webhooks in a test store. */
export function webhookUrlOf(api: Api & { defaults: { baseURL: string } }): string {
  return `${api.defaults.baseURL}/hooks/payment/purchase-auth_purchase-auth`;
}

/**
 * The test store, seeded, as a Shop: an admin session, and the sandbox sending the merchant's
 * webhooks to the store, signed with `webhookSecret`. Call it once the runner has started Medusa.
 */
export async function openShop(
  api: Api & { defaults: { baseURL: string } },
  container: MedusaContainer,
  sandbox: SandboxServer,
  merchant: MerchantCredentials,
  webhookSecret: string,
): Promise<{ shop: Shop; store: SeededStore }> {
  const store = await seedStore(container);
  const admin = await loginAdmin(api, container);
  sandbox.setWebhooks({
    merchantId: merchant.merchantId,
    urls: [webhookUrlOf(api)],
    secrets: [webhookSecret],
  });
  const shop: Shop = {
    api,
    sandbox,
    merchantId: merchant.merchantId,
    admin,
    publishableKey: store.publishableKey,
    regionId: store.regionId,
    variantId: store.variantId,
    shippingOptionId: store.shippingOptionId,
  };
  return { shop, store };
}

/** A payment session as stored: Medusa's status and the plugin's data. */
export interface StoredSession {
  id: string;
  status: string;
  data: Record<string, unknown>;
}

/** The live payment sessions of payment collection `collectionId`, oldest first, read from the database. */
export async function sessionsOf(container: MedusaContainer, collectionId: string): Promise<StoredSession[]> {
  const knex = container.resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as {
    raw(sql: string, bindings: unknown[]): Promise<{ rows: StoredSession[] }>;
  };
  const { rows } = await knex.raw(
    "select id, status, data from payment_session where payment_collection_id = ? and deleted_at is null order by created_at, id",
    [collectionId],
  );
  return rows;
}
