import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { forkRpcChild, type RpcChild } from "../child-rpc.js";
import { CHARGE_PATHS, type ExpressVariantName, SESSION_HEADER, SESSION_ID } from "../express-apps.js";
import type { ExpressProcessInput, ExpressProcessMethod } from "../express-process.js";
import { type CellResult, median, rotate, runCell } from "../measure.js";
import { pairedRatio } from "../paired-ratio.js";
import type { SandboxHost } from "../sandbox-host.js";
import { MAX_CONNECTIONS } from "../variants/variant.js";
import type { ThroughputSettings } from "./create-throughput.js";

// Row 6: the Express adapter's charge route (`purchaseAuth`, POST /charges) against a bare Express
// route that calls core's client directly, for the same order. Each app runs in a child process of
// its own (like the sandbox, for the same reasons: a core each, and its CPU measured apart); this
// process is only the load generator, raw undici.

const VARIANTS: readonly ExpressVariantName[] = ["adapter", "bare"];

export interface ExpressAdapterCell {
  variant: ExpressVariantName;
  concurrency: number;
  rounds: Array<
    CellResult & {
      appCpuPercent: number;
      appCpuMicrosPerOp: number;
      sandboxCpuPercent: number;
      loadGeneratorCpuPercent: number;
    }
  >;
  /** Medians over the rounds. */
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  appCpuPercent: number;
  /** CPU time the app's process spent per request (Express, the route, core's client): its cost. */
  appCpuMicrosPerOp: number;
  sandboxCpuPercent: number;
  loadGeneratorCpuPercent: number;
}

export interface ExpressAdapterRatio {
  concurrency: number;
  /** Throughput, adapter / bare, pooled over the rounds (goal ≥ 0.9, `GOALS` in report.ts). */
  adapterOverBare: number;
  adapterOverBareInterval: [number, number];
  /** App CPU per request, adapter / bare, pooled over the rounds (goal ≤ 1.1). */
  adapterCpuOverBare: number;
  adapterCpuOverBareInterval: [number, number];
}

export interface ExpressAdapterResult {
  settings: ThroughputSettings;
  cells: ExpressAdapterCell[];
  ratios: ExpressAdapterRatio[];
  /** Each app process's heap after two full GCs at the end of the row, and the charges it made. */
  appHeapAtEnd: Array<{ variant: ExpressVariantName; heapBytes: number; charges: number }>;
  /**
   * Bytes each app allocated per charge on the V8 heap (collected objects included), sampled over
   * `ALLOCATION_CHARGES` charges at c = 16 after the rounds: the load-independent side of its cost.
   */
  allocatedBytesPerCharge: Array<{ variant: ExpressVariantName; bytes: number }>;
}

/** Charges per app sampled for `allocatedBytesPerCharge`. */
const ALLOCATION_CHARGES = 2_000;

interface LoadedApp {
  name: ExpressVariantName;
  child: RpcChild<ExpressProcessMethod | "close">;
  charge(): Promise<void>;
  close(): Promise<void>;
}

/** Starts one app's process (its own sandbox merchant) and a raw undici load generator for it. */
async function openApp(host: SandboxHost, name: ExpressVariantName): Promise<LoadedApp> {
  const input: ExpressProcessInput = { variant: name, shop: await host.openShop() };
  const entry = fileURLToPath(new URL("../express-process.js", import.meta.url));
  const child = await forkRpcChild<ExpressProcessMethod>(entry, {
    args: [JSON.stringify(input)],
    execArgv: ["--expose-gc"],
  });
  const agent = new Agent({
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    connections: MAX_CONNECTIONS,
  });
  const url = new URL(CHARGE_PATHS[name], child.ready);
  const headers = {
    "content-type": "application/json",
    accept: "application/json",
    [SESSION_HEADER]: SESSION_ID,
  };
  // Every request a new cart, so a new reference and key: the adapter never answers from its store.
  let cart = 0;
  return {
    name,
    child,
    charge: async () => {
      const cartId = `${name[0]}${(cart++).toString(36)}`;
      const response = await request(url, {
        dispatcher: agent,
        method: "POST",
        headers,
        body: `{"cartId":"${cartId}"}`,
      });
      const body = (await response.body.json()) as { status?: unknown; synchronous?: unknown };
      assertSynchronousCharge(name, response.statusCode, body);
    },
    close: async () => {
      await agent.close();
      await child.close();
    },
  };
}

/**
 * Both answer 201 for a new charge; the service's 200 shows as the adapter's `captured` (auto
 * capture) and as the bare route's `synchronous: true`. Anything else aborts the run.
 */
function assertSynchronousCharge(
  name: ExpressVariantName,
  status: number,
  body: { status?: unknown; synchronous?: unknown },
): void {
  const synchronous = name === "adapter" ? body.status === "captured" : body.synchronous === true;
  if (status !== 201 || !synchronous) {
    throw new Error(`${name}: charge answered HTTP ${status} ${JSON.stringify(body).slice(0, 300)}`);
  }
}

export async function measureExpressAdapter(
  host: SandboxHost,
  settings: ThroughputSettings,
  log: (line: string) => void,
): Promise<ExpressAdapterResult> {
  const apps: LoadedApp[] = [];
  try {
    for (const name of VARIANTS) apps.push(await openApp(host, name));
    for (const app of apps)
      await runCell(app.charge, { operations: settings.initialWarmup, concurrency: 16 });

    const cells: ExpressAdapterCell[] = [];
    for (const concurrency of settings.concurrencies) {
      const byVariant = new Map<ExpressVariantName, ExpressAdapterCell["rounds"]>();
      for (let round = 0; round < settings.rounds; round++) {
        for (const app of rotate(apps, round)) {
          await runCell(app.charge, { operations: settings.warmupPerCell, concurrency });
          const loaderBefore = process.cpuUsage();
          const appBefore = await app.child.call<number>("cpuMicros");
          const sandboxBefore = await host.cpuMicros();
          const cell = await runCell(app.charge, { operations: settings.operations, concurrency });
          const loaderUsage = process.cpuUsage(loaderBefore);
          const appMicros = (await app.child.call<number>("cpuMicros")) - appBefore;
          const sandboxMicros = (await host.cpuMicros()) - sandboxBefore;
          const wallMicros = cell.seconds * 1e6;
          const rounds = byVariant.get(app.name) ?? [];
          rounds.push({
            ...cell,
            appCpuPercent: (appMicros / wallMicros) * 100,
            appCpuMicrosPerOp: appMicros / cell.operations,
            sandboxCpuPercent: (sandboxMicros / wallMicros) * 100,
            loadGeneratorCpuPercent: ((loaderUsage.user + loaderUsage.system) / wallMicros) * 100,
          });
          byVariant.set(app.name, rounds);
          log(
            `  c=${concurrency} round ${round + 1} ${app.name.padEnd(7)} ${cell.opsPerSec.toFixed(0).padStart(6)} ops/s  p50 ${cell.p50Ms.toFixed(2)} ms  p99 ${cell.p99Ms.toFixed(2)} ms  app ${(appMicros / cell.operations).toFixed(0)} µs/op`,
          );
        }
      }
      for (const name of VARIANTS) {
        const rounds = byVariant.get(name) ?? [];
        cells.push({
          variant: name,
          concurrency,
          rounds,
          opsPerSec: median(rounds.map((r) => r.opsPerSec)),
          p50Ms: median(rounds.map((r) => r.p50Ms)),
          p99Ms: median(rounds.map((r) => r.p99Ms)),
          appCpuPercent: median(rounds.map((r) => r.appCpuPercent)),
          appCpuMicrosPerOp: median(rounds.map((r) => r.appCpuMicrosPerOp)),
          sandboxCpuPercent: median(rounds.map((r) => r.sandboxCpuPercent)),
          loadGeneratorCpuPercent: median(rounds.map((r) => r.loadGeneratorCpuPercent)),
        });
      }
    }

    const appHeapAtEnd: ExpressAdapterResult["appHeapAtEnd"] = [];
    for (const app of apps) {
      appHeapAtEnd.push({
        variant: app.name,
        heapBytes: await app.child.call<number>("heapAfterGc"),
        charges: await app.child.call<number>("charges"),
      });
    }
    const allocatedBytesPerCharge: ExpressAdapterResult["allocatedBytesPerCharge"] = [];
    const charges = Math.min(ALLOCATION_CHARGES, settings.operations * 4);
    for (const app of apps) {
      await app.child.call("startAllocationSampling");
      await runCell(app.charge, { operations: charges, concurrency: 16 });
      const bytes = await app.child.call<number>("stopAllocationSampling");
      allocatedBytesPerCharge.push({ variant: app.name, bytes: bytes / charges });
    }
    const ratios = ratiosOf(cells, settings.concurrencies);
    return { settings, cells, ratios, appHeapAtEnd, allocatedBytesPerCharge };
  } finally {
    for (const app of apps) await app.close();
  }
}

/**
 * Each cell's ratios pooled over its rounds, round i of the adapter paired with round i of the bare
 * route (run one right after the other): see paired-ratio.ts for why pooled.
 */
export function ratiosOf(
  cells: readonly ExpressAdapterCell[],
  concurrencies: readonly number[],
): ExpressAdapterRatio[] {
  const roundsOf = (variant: ExpressVariantName, concurrency: number) =>
    cells.find((cell) => cell.variant === variant && cell.concurrency === concurrency)?.rounds ?? [];
  return concurrencies.map((concurrency) => {
    const adapter = roundsOf("adapter", concurrency);
    const bare = roundsOf("bare", concurrency);
    // Every round runs the same number of requests: Σ µs/op is in proportion to Σ CPU time, and
    // Σ seconds/op to Σ wall time, so bare seconds over adapter seconds is the throughput ratio.
    const cpu = pairedRatio(
      adapter.map((round) => round.appCpuMicrosPerOp),
      bare.map((round) => round.appCpuMicrosPerOp),
    );
    const throughput = pairedRatio(
      bare.map((round) => 1 / round.opsPerSec),
      adapter.map((round) => 1 / round.opsPerSec),
    );
    return {
      concurrency,
      adapterOverBare: throughput.ratio,
      adapterOverBareInterval: throughput.interval,
      adapterCpuOverBare: cpu.ratio,
      adapterCpuOverBareInterval: cpu.interval,
    };
  });
}
