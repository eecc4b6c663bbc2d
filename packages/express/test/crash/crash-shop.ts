import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject } from "vitest";
import {
  freePort,
  type SandboxProcess,
  type ShopProcess,
  shopProcess,
  startSandboxProcess,
} from "./processes.js";

// What the crash tests set up: the sandbox in a process with one merchant, then the shop in a
// process on a schema of its own, with its customers and carts, receiving the merchant's webhooks.

export interface Merchant {
  merchantId: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

/** The sandbox in a child process, and the merchant the shop charges for. */
export async function sandboxWithMerchant(): Promise<{ sandbox: SandboxProcess; merchant: Merchant }> {
  const sandbox = await startSandboxProcess();
  const merchant = await sandbox.control<Merchant>("POST", "/sandbox/merchants", {});
  return { sandbox, merchant };
}

export interface CrashShop {
  shop: ShopProcess;
  /** A pool on the shop's database (its own schema), for reading its records. */
  admin: pg.Pool;
  schema: string;
  /** Kills the shop and drops its schema. */
  close(): Promise<void>;
}

/**
 * Starts the shop (shop-process.mjs) on a fresh schema with `shop` as its data (customers and
 * carts), and points the merchant's webhooks at it. `env` adds the shop's other settings.
 */
export async function startCrashShop(input: {
  sandbox: SandboxProcess;
  merchant: Merchant;
  shop: { customers: unknown[]; carts: Record<string, unknown> };
  webhookSecret: string;
  env?: Record<string, string>;
}): Promise<CrashShop> {
  const { sandbox, merchant, webhookSecret } = input;
  const shopDirectory = mkdtempSync(join(tmpdir(), "purchase-auth-crash-"));
  const shopFile = join(shopDirectory, "shop.json");
  writeFileSync(shopFile, JSON.stringify(input.shop));
  const databaseUrl = inject("databaseUrl");
  const schema = `express_crash_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const shop = shopProcess(await freePort(), {
    SHOP_FILE: shopFile,
    DATABASE_URL: databaseUrl,
    PG_OPTIONS: `-c search_path=${schema}`,
    SANDBOX_URL: sandbox.url,
    CLIENT_ID: merchant.clientId,
    CLIENT_SECRET: merchant.clientSecret,
    SCOPE: merchant.scope,
    WEBHOOK_SECRET: webhookSecret,
    ...input.env,
  });
  await shop.start();
  await sandbox.control("POST", "/sandbox/webhooks", {
    merchantId: merchant.merchantId,
    urls: [`${shop.url}/payments/webhooks`],
    secrets: [webhookSecret],
  });
  return {
    shop,
    admin,
    schema,
    async close() {
      await shop.kill();
      rmSync(shopDirectory, { recursive: true, force: true }); // its customers' tokens
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}
