import { fileURLToPath } from "node:url";
import { type SandboxOptions, type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { forkRpcChild } from "./child-rpc.js";
import { type OwnWorkSettings, ownWorkMicrosPerCreate } from "./own-work.js";
import type { ShopCredentials } from "./wire.js";

/**
 * Where the benchmarked sandbox runs. In a child process it gets a core of its own, so the client
 * side is not slowed by the server sharing its event loop (see README, "Where the sandbox runs").
 */
export type SandboxPlacement = "in-process" | "child-process";

export interface SandboxHost {
  readonly placement: SandboxPlacement;
  readonly url: string;
  /** A new merchant with an Active customer token (EUR, auto capture, unlimited funds). */
  openShop(): Promise<ShopCredentials>;
  /** CPU time the sandbox's process has used so far, in microseconds (user + system). */
  cpuMicros(): Promise<number>;
  /** CPU µs per create of the sandbox's own work, its `handle` in a loop without HTTP (own-work.ts). */
  ownWorkMicros(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Bounded stores so the sandbox reaches its steady state (evicting the oldest records) during the
 * warm-up instead of growing through the measured rounds.
 */
export const BENCH_SANDBOX_OPTIONS: SandboxOptions = {
  historyLimit: 1_000,
  maxStoredObjects: 20_000,
  maxIdempotencyKeys: 20_000,
};

/** How `ownWorkMicros` measures: 5 windows of 4,000 creates (BENCH_QUICK: 2 of 100, stores not filled). */
export const OWN_WORK: OwnWorkSettings =
  process.env.BENCH_QUICK === "1"
    ? { fill: false, windows: 2, createsPerWindow: 100 }
    : { fill: true, windows: 5, createsPerWindow: 4_000 };

/** A new merchant and its customer token, on a sandbox served at `sandbox.url`. */
export function shopOf(
  sandbox: Pick<SandboxServer, "url" | "createMerchant" | "createCustomerToken">,
): ShopCredentials {
  const merchant = sandbox.createMerchant();
  const { customerToken } = sandbox.createCustomerToken({ merchantId: merchant.merchantId });
  return {
    baseUrl: sandbox.url,
    merchantId: merchant.merchantId,
    clientId: merchant.clientId,
    clientSecret: merchant.clientSecret,
    scope: merchant.scope,
    customerToken,
  };
}

export function startSandboxHost(placement: SandboxPlacement): Promise<SandboxHost> {
  return placement === "in-process" ? startInProcess() : startChildProcess();
}

async function startInProcess(): Promise<SandboxHost> {
  const sandbox = await startSandbox(BENCH_SANDBOX_OPTIONS);
  return {
    placement: "in-process",
    url: sandbox.url,
    openShop: async () => shopOf(sandbox),
    // The sandbox shares this process: its CPU time cannot be told apart from the client's.
    cpuMicros: async () => Number.NaN,
    ownWorkMicros: () => ownWorkMicrosPerCreate(sandbox, OWN_WORK),
    close: () => sandbox.close(),
  };
}

async function startChildProcess(): Promise<SandboxHost> {
  const entry = fileURLToPath(new URL("./sandbox-process.js", import.meta.url));
  const child = await forkRpcChild<"openShop" | "cpuMicros" | "ownWorkMicros">(entry);
  return {
    placement: "child-process",
    url: child.ready,
    openShop: () => child.call<ShopCredentials>("openShop"),
    cpuMicros: () => child.call<number>("cpuMicros"),
    ownWorkMicros: () => child.call<number>("ownWorkMicros"),
    close: () => child.close(),
  };
}
