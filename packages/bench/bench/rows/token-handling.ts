import { PurchaseAuthClient, type PurchaseAuthClientOptions } from "@purchase-auth/core";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { shopOf } from "../sandbox-host.js";
import { authorizationBody, type ShopCredentials } from "../wire.js";

// Row 2: how many token requests the client makes. Counted at the sandbox, which records every
// request to its token endpoint. An in-process sandbox, because the simulated day needs the
// client's clock to be the sandbox's virtual clock.

export interface TokenHandlingResult {
  coldBurst: { concurrentCalls: number; tokenRequests: number; expected: number };
  simulatedDay: {
    calls: number;
    stepMinutes: number;
    tokenLifetimeSeconds: number;
    tokenRequests: number;
    expected: [number, number];
  };
}

const ONE_MINUTE = 60_000;

export async function measureTokenHandling(): Promise<TokenHandlingResult> {
  const sandbox = await startSandbox();
  try {
    return { coldBurst: await coldBurst(sandbox), simulatedDay: await simulatedDay(sandbox) };
  } finally {
    await sandbox.close();
  }
}

function clientFor(
  shop: ShopCredentials,
  options: Partial<PurchaseAuthClientOptions> = {},
): PurchaseAuthClient {
  const { baseUrl, clientId, clientSecret, scope } = shop;
  return new PurchaseAuthClient({ baseUrl, clientId, clientSecret, scope, ...options });
}

function tokenRequestsOf(sandbox: SandboxServer, clientId: string): number {
  return sandbox.tokenRequests().filter((request) => request.clientId === clientId).length;
}

/** 1,000 calls at once on a client that has no token yet: they must share one token request. */
async function coldBurst(sandbox: SandboxServer): Promise<TokenHandlingResult["coldBurst"]> {
  const concurrentCalls = 1_000;
  const shop = shopOf(sandbox);
  const client = clientFor(shop);
  const request = authorizationBody(shop.customerToken);
  try {
    await Promise.all(Array.from({ length: concurrentCalls }, () => client.authorizations.create(request)));
  } finally {
    await client.close();
  }
  return { concurrentCalls, tokenRequests: tokenRequestsOf(sandbox, shop.clientId), expected: 1 };
}

/**
 * One call per virtual minute for 24 virtual hours with one-hour tokens: one token per hour
 * (refreshed in the background 2 minutes before expiry), never one per call.
 */
async function simulatedDay(sandbox: SandboxServer): Promise<TokenHandlingResult["simulatedDay"]> {
  const shop = shopOf(sandbox);
  const client = clientFor(shop, { now: () => sandbox.now() });
  const request = authorizationBody(shop.customerToken);
  const calls = 24 * 60;
  try {
    for (let minute = 0; minute < calls; minute++) {
      sandbox.advanceClock(ONE_MINUTE);
      await client.authorizations.create(request);
    }
  } finally {
    await client.close();
  }
  return {
    calls,
    stepMinutes: 1,
    tokenLifetimeSeconds: sandbox.options.tokenLifetimeSeconds,
    tokenRequests: tokenRequestsOf(sandbox, shop.clientId),
    expected: [24, 25],
  };
}
