import { PurchaseAuthClient, type PurchaseAuthClientOptions } from "@purchase-auth/core";
import {
  type AuthorizationView,
  type OrderView,
  type SandboxServer,
  startSandbox,
} from "@purchase-auth/sandbox";
import type { ChargeItem } from "../../src/index.js";

/** One merchant of the sandbox, a client of ours for it, and ways to read what the sandbox holds. */
export interface Shop {
  sandbox: SandboxServer;
  merchantId: string;
  credentials: { baseUrl: string; clientId: string; clientSecret: string; scope: string };
  client: PurchaseAuthClient;
  /** A new customer token of this merchant (Active, unlimited funds unless told otherwise). */
  token(input?: {
    status?: "Revoked" | "Denied";
    failNextAttempts?: string[];
    failureReason?: string;
    funds?: string;
  }): string;
}

/** Fast backoff so that faults cost milliseconds; the behaviour is the same. */
export const FAST_RETRIES = { retryBaseDelayMs: 2, retryMaxDelayMs: 20 } as const;

export async function openShop(
  options: Partial<PurchaseAuthClientOptions> = {},
  seed?: number,
): Promise<Shop> {
  const sandbox = await startSandbox(seed === undefined ? {} : { seed });
  const merchant = sandbox.createMerchant();
  const credentials = {
    baseUrl: sandbox.url,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    scope: merchant.scope,
  };
  return {
    sandbox,
    merchantId: merchant.merchantId,
    credentials,
    client: new PurchaseAuthClient({ ...credentials, ...FAST_RETRIES, ...options }),
    token: (input = {}) =>
      sandbox.createCustomerToken({ merchantId: merchant.merchantId, ...input }).customerToken,
  };
}

/** A one-line order of `amount` EUR whose reference is the item id (so sandbox records map back). */
export function chargeItem(itemId: string, customerToken: string, amount = "9.99"): ChargeItem {
  return {
    itemId,
    customerToken,
    order: {
      currency: "EUR",
      reference: itemId,
      items: [{ id: "plan", description: "Monthly plan", unitPrice: amount, quantity: "1", vat: "21" }],
    },
  };
}

/** What the sandbox holds, read over its HTTP control routes (as another process would). */
export async function sandboxRecords(
  shop: Shop,
): Promise<{ authorizations: AuthorizationView[]; orders: OrderView[] }> {
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(
      `${shop.sandbox.url}${path}?merchantId=${encodeURIComponent(shop.merchantId)}`,
    );
    if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status}`);
    return (await response.json()) as T;
  };
  return {
    authorizations: await get<AuthorizationView[]>("/sandbox/authorizations"),
    orders: await get<OrderView[]>("/sandbox/orders"),
  };
}

export async function injectFaults(
  shop: Shop,
  faults: ReadonlyArray<Record<string, unknown>>,
): Promise<void> {
  for (const fault of faults) {
    const response = await fetch(`${shop.sandbox.url}/sandbox/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match: { method: "POST", path: "/purchase/authorizations" }, ...fault }),
    });
    if (!response.ok)
      throw new Error(`POST /sandbox/faults: HTTP ${response.status} ${await response.text()}`);
  }
}

export async function clearFaults(shop: Shop): Promise<void> {
  await fetch(`${shop.sandbox.url}/sandbox/faults`, { method: "DELETE" });
}

/** Cents of a decimal string ("9.99" → 999n). */
export function cents(amount: string): bigint {
  const [whole, fraction = ""] = amount.split(".");
  return BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, "0").slice(0, 2));
}

/**
 * Per item (the order reference): how many authorizations succeeded and how many cents were
 * captured at the sandbox.
 */
export function chargesByItem(records: {
  authorizations: AuthorizationView[];
  orders: OrderView[];
}): Map<string, { succeeded: number; captures: number; capturedCents: bigint; authorizationIds: string[] }> {
  const byItem = new Map<
    string,
    { succeeded: number; captures: number; capturedCents: bigint; authorizationIds: string[] }
  >();
  const entry = (itemId: string) => {
    let found = byItem.get(itemId);
    if (!found) {
      found = { succeeded: 0, captures: 0, capturedCents: 0n, authorizationIds: [] };
      byItem.set(itemId, found);
    }
    return found;
  };
  const itemOfAuthorization = new Map<string, string>();
  for (const authorization of records.authorizations) {
    const itemId = authorization.reference ?? "(none)";
    itemOfAuthorization.set(authorization.authorizationId, itemId);
    const found = entry(itemId);
    found.authorizationIds.push(authorization.authorizationId);
    if (authorization.status === "Succeeded") found.succeeded++;
  }
  for (const order of records.orders) {
    const found = entry(itemOfAuthorization.get(order.authorizationId) ?? "(unknown authorization)");
    for (const operation of order.operations) {
      if (operation.type !== "capture") continue;
      found.captures++;
      found.capturedCents += cents(operation.amount);
    }
  }
  return byItem;
}
