import {
  type MerchantCredentials,
  type SandboxOptions,
  type SandboxServer,
  startSandbox,
} from "@purchase-auth/sandbox";

/**
 * A sandbox for one test file and a merchant of it, whose credentials go into the environment that
 * medusa-config.ts reads when Medusa's runner loads it (so call this in a beforeAll that runs first).
 */
export async function startSandboxForMedusa(
  webhookSecret: string,
  options: SandboxOptions = {},
): Promise<{ sandbox: SandboxServer; merchant: MerchantCredentials }> {
  const sandbox = await startSandbox(options);
  const merchant = sandbox.createMerchant();
  Object.assign(process.env, {
    PURCHASE_AUTH_BASE_URL: sandbox.url,
    PURCHASE_AUTH_CLIENT_ID: merchant.clientId,
    PURCHASE_AUTH_CLIENT_SECRET: merchant.clientSecret,
    PURCHASE_AUTH_SCOPE: merchant.scope,
    PURCHASE_AUTH_WEBHOOK_SECRET: webhookSecret,
  });
  return { sandbox, merchant };
}
