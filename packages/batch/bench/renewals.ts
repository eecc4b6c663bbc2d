import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type AuthorizationRequestInput, PurchaseAuthClient } from "@purchase-auth/core";
import pg from "pg";
import { startTestPostgres } from "purchase-auth-test-postgres";
import {
  batchChargeKey,
  type ChargeClient,
  type ChargeItem,
  MemoryBatchStore,
  PostgresBatchStore,
  runBatch,
} from "../src/index.js";

// `pnpm bench` row of this package: renewals (merchant-initiated charges of stored tokens) through
// the batch runner, with each store, against core alone (a loop of `authorizations.create` with a
// derived key and no state: what the runner adds is its write-ahead record, its compare-and-set and
// its bookkeeping). The sandbox runs in a child process. Rounds interleave the variants; the table
// gives the median. BENCH_QUICK=1: tiny counts (a smoke test, not numbers to quote).

const quick = process.env.BENCH_QUICK === "1";
// BENCH_RENEWALS=100000 BENCH_ROUNDS=1: the 100,000-renewal run (minutes, not part of `pnpm bench`).
const CHARGES = Number(process.env.BENCH_RENEWALS ?? (quick ? 100 : 2_000));
const WARMUP = quick ? 20 : 200;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const CONCURRENCY = 16;

type Variant = "core" | "batch/memory" | "batch/postgres";
const VARIANTS: Variant[] = ["core", "batch/memory", "batch/postgres"];

interface Shop {
  client: PurchaseAuthClient;
  customerToken: string;
}

async function main(): Promise<void> {
  const sandbox = await startSandboxChild();
  const postgres = await startTestPostgres();
  const pool = new pg.Pool({ connectionString: postgres.url, max: CONCURRENCY + 2 });
  // A client closing while the server stops at the end is no failure of the benchmark.
  pool.on("error", () => {});
  const pgStore = new PostgresBatchStore({ pool });
  await pgStore.migrate();
  const failed: string[] = [];
  const perRound = new Map<
    Variant,
    Array<{ perSec: number; cpuMicrosPerCharge: number; p99Ms: number; peakRssMiB: number }>
  >(VARIANTS.map((v) => [v, []]));
  try {
    const shops = new Map<Variant, Shop>();
    for (const variant of VARIANTS) shops.set(variant, await openShop(sandbox.url));
    let batchNo = 0;
    const run = async (variant: Variant, count: number) => {
      const shop = shops.get(variant)!;
      const batchId = `bench-${variant}-${batchNo++}`;
      const items = Array.from({ length: count }, (_, i) => renewal(`${batchId}-${i}`, shop.customerToken));
      // Each create call timed (the same wrapper for every variant), and the process's peak memory.
      const latencies: number[] = [];
      const client = timedClient(shop.client, latencies);
      let peakRss = process.memoryUsage().rss;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }, 100);
      const cpu = process.cpuUsage();
      const started = performance.now();
      const charged =
        variant === "core"
          ? await coreAlone(client, batchId, items)
          : (
              await runBatch({
                client,
                store: variant === "batch/memory" ? new MemoryBatchStore() : pgStore,
                batchId,
                items,
                concurrency: CONCURRENCY,
              })
            ).charged;
      const seconds = (performance.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      clearInterval(sampler);
      if (charged !== count) failed.push(`${variant}: ${charged} of ${count} charged`);
      latencies.sort((a, b) => a - b);
      return {
        perSec: count / seconds,
        cpuMicrosPerCharge: (used.user + used.system) / count,
        p99Ms: latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0,
        peakRssMiB: peakRss / 2 ** 20,
      };
    };
    for (const variant of VARIANTS) await run(variant, WARMUP);
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`round ${round}/${ROUNDS} …\n`);
      for (const variant of VARIANTS) perRound.get(variant)!.push(await run(variant, CHARGES));
    }
  } finally {
    await pool.end();
    await postgres.stop();
    sandbox.close();
  }

  const coreRate = median(perRound.get("core")!.map((r) => r.perSec));
  const lines = [
    `batch renewals: ${CHARGES} charges per round, concurrency ${CONCURRENCY}, median of ${ROUNDS} interleaved rounds (sandbox in a child process${quick ? "; BENCH_QUICK" : ""})`,
    `  ${"variant".padEnd(15)} ${"charges/s".padStart(10)} ${"vs core".padStart(8)} ${"runner CPU µs/charge".padStart(21)} ${"create p99 ms".padStart(14)} ${"peak RSS MiB".padStart(13)}`,
  ];
  for (const variant of VARIANTS) {
    const rounds = perRound.get(variant)!;
    const rate = median(rounds.map((r) => r.perSec));
    const cpu = median(rounds.map((r) => r.cpuMicrosPerCharge));
    const p99 = median(rounds.map((r) => r.p99Ms));
    const rss = Math.max(...rounds.map((r) => r.peakRssMiB));
    lines.push(
      `  ${variant.padEnd(15)} ${rate.toFixed(0).padStart(10)} ${(rate / coreRate).toFixed(2).padStart(8)} ${cpu.toFixed(0).padStart(21)} ${p99.toFixed(1).padStart(14)} ${rss.toFixed(0).padStart(13)}`,
    );
  }
  if (failed.length > 0) lines.push(`  FAILED: ${failed.join("; ")}`);
  process.stdout.write(`\n${lines.join("\n")}\n`);
  if (failed.length > 0) process.exitCode = 1;
}

/** The client with each create call's duration pushed to `latencies` (ms). */
function timedClient(client: PurchaseAuthClient, latencies: number[]): ChargeClient {
  return {
    authorizations: {
      async create(request, options) {
        const started = performance.now();
        try {
          return await client.authorizations.create(request, options);
        } finally {
          latencies.push(performance.now() - started);
        }
      },
    },
  };
}

/** Core alone: the same charges and keys, `CONCURRENCY` at a time, nothing stored. */
async function coreAlone(client: ChargeClient, batchId: string, items: ChargeItem[]): Promise<number> {
  let next = 0;
  let charged = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      const request: AuthorizationRequestInput = {
        customerToken: item.customerToken,
        order: item.order,
        attemptSchedule: { preferSynchronous: true },
      };
      const key = batchChargeKey(batchId, item.itemId, item.customerToken, 1);
      const created = await client.authorizations.create(request, { idempotencyKey: key });
      if (created.synchronous) charged++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return charged;
}

function renewal(itemId: string, customerToken: string): ChargeItem {
  return {
    itemId,
    customerToken,
    order: {
      currency: "EUR",
      reference: itemId.slice(-50),
      items: [{ id: "plan", description: "Monthly plan", unitPrice: "9.99", quantity: "1", vat: "21" }],
    },
  };
}

async function openShop(url: string): Promise<Shop> {
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: HTTP ${response.status}`);
    return (await response.json()) as T;
  };
  const merchant = await post<{ merchantId: string; clientId: string; clientSecret: string; scope: string }>(
    "/sandbox/merchants",
    {},
  );
  const token = await post<{ customerToken: string }>("/sandbox/customer-tokens", {
    merchantId: merchant.merchantId,
  });
  return {
    client: new PurchaseAuthClient({
      baseUrl: url,
      clientId: merchant.clientId,
      clientSecret: merchant.clientSecret,
      scope: merchant.scope,
    }),
    customerToken: token.customerToken,
  };
}

async function startSandboxChild(): Promise<{ url: string; close(): void }> {
  const entry = fileURLToPath(new URL("./sandbox-child.js", import.meta.url));
  const child = fork(entry, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (message) => resolve((message as { url: string }).url));
    child.once("exit", (code) => reject(new Error(`the sandbox process exited (${code})`)));
  });
  return { url, close: () => child.disconnect() };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

await main();
