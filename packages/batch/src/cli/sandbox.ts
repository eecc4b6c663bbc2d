import type { ChargeItem } from "../items.js";

/** What `--sandbox` needs: the URL and credentials of a fresh sandbox merchant, and a way to stop it. */
export interface EmbeddedSandbox {
  service: { baseUrl: string; clientId: string; clientSecret: string; scope: string };
  close(): Promise<void>;
}

/**
 * Starts `@purchase-auth/sandbox` in this process (an optional dependency, loaded only here) with
 * one merchant, and creates every customer token of the items in it (Active, in the order's
 * currency), so that a file can be tried end to end without a real service.
 */
export async function startEmbeddedSandbox(items: ReadonlyArray<ChargeItem>): Promise<EmbeddedSandbox> {
  let module: typeof import("@purchase-auth/sandbox");
  try {
    module = await import("@purchase-auth/sandbox");
  } catch {
    throw new Error(
      "--sandbox needs the package @purchase-auth/sandbox: install it next to @purchase-auth/batch",
    );
  }
  const sandbox = await module.startSandbox();
  const merchant = sandbox.createMerchant({ name: "purchase-auth-batch --sandbox" });
  const created = new Set<string>();
  for (const item of items) {
    const token = item.customerToken.toLowerCase();
    if (created.has(token)) continue;
    created.add(token);
    sandbox.createCustomerToken({
      merchantId: merchant.merchantId,
      customerToken: item.customerToken,
      currency: String(item.order.currency).toUpperCase(),
    });
  }
  return {
    service: {
      baseUrl: sandbox.url,
      clientId: merchant.clientId,
      clientSecret: merchant.clientSecret,
      scope: merchant.scope,
    },
    close: () => sandbox.close(),
  };
}
