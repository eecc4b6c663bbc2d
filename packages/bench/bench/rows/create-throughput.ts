import { type CellResult, median, rotate, runCell } from "../measure.js";
import { pairedRatio } from "../paired-ratio.js";
import type { SandboxHost } from "../sandbox-host.js";
import { type CreateVariant, VARIANTS, type VariantName } from "../variants/index.js";

// Row 1: create-authorization throughput and latency of four clients, side by side.

export interface ThroughputSettings {
  concurrencies: readonly number[];
  rounds: number;
  /** Measured operations per cell (one variant, one concurrency, one round). */
  operations: number;
  /** Unmeasured operations before each cell, so pools are open at that concurrency. */
  warmupPerCell: number;
  /** Unmeasured operations per variant before anything is measured (JIT, token, sockets). */
  initialWarmup: number;
}

export interface ThroughputCell {
  variant: VariantName;
  concurrency: number;
  rounds: Array<
    CellResult & { clientCpuPercent: number; clientCpuMicrosPerOp: number; sandboxCpuPercent: number }
  >;
  /** Medians over the rounds. */
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  clientCpuPercent: number;
  /** CPU time this process spent per operation: the client's cost, whatever limits the throughput. */
  clientCpuMicrosPerOp: number;
  sandboxCpuPercent: number;
}

export interface ThroughputRatios {
  concurrency: number;
  oursOverRaw: number;
  oursOverFetch: number;
  oursOverAxios: number;
  /**
   * Client CPU per operation, ours / raw: how much more work our client does per call. Pooled over
   * the rounds (round i of ours paired with round i of raw, run in the same round), as row 6's.
   */
  oursCpuOverRaw: number;
  /** Its 90% paired-bootstrap interval (paired-ratio.ts). */
  oursCpuOverRawInterval: [number, number];
}

export async function measureCreateThroughput(
  host: SandboxHost,
  settings: ThroughputSettings,
  log: (line: string) => void,
): Promise<{ cells: ThroughputCell[]; ratios: ThroughputRatios[] }> {
  // One merchant per variant: no variant's sandbox state (keys, records) is in another's way.
  const variants: CreateVariant[] = [];
  for (const { open } of VARIANTS) variants.push(await open(await host.openShop()));
  try {
    for (const variant of variants)
      await runCell(variant.create, { operations: settings.initialWarmup, concurrency: 16 });

    const cells: ThroughputCell[] = [];
    for (const concurrency of settings.concurrencies) {
      const byVariant = new Map<VariantName, ThroughputCell["rounds"]>();
      for (let round = 0; round < settings.rounds; round++) {
        // Each round starts with another variant, so a slow phase of this shared machine does not
        // always land on the same one.
        for (const variant of rotate(variants, round)) {
          await runCell(variant.create, { operations: settings.warmupPerCell, concurrency });
          // The client's window holds the cell alone, not the calls that read the sandbox's CPU.
          const sandboxBefore = await host.cpuMicros();
          const clientBefore = process.cpuUsage();
          const cell = await runCell(variant.create, { operations: settings.operations, concurrency });
          const clientUsage = process.cpuUsage(clientBefore);
          const sandboxMicros = (await host.cpuMicros()) - sandboxBefore;
          const wallMicros = cell.seconds * 1e6;
          const clientMicros = clientUsage.user + clientUsage.system;
          const rounds = byVariant.get(variant.name) ?? [];
          rounds.push({
            ...cell,
            clientCpuPercent: (clientMicros / wallMicros) * 100,
            clientCpuMicrosPerOp: clientMicros / cell.operations,
            sandboxCpuPercent: (sandboxMicros / wallMicros) * 100,
          });
          byVariant.set(variant.name, rounds);
          log(
            `  c=${concurrency} round ${round + 1} ${variant.name.padEnd(10)} ${cell.opsPerSec.toFixed(0).padStart(6)} ops/s  p50 ${cell.p50Ms.toFixed(2)} ms  p99 ${cell.p99Ms.toFixed(2)} ms`,
          );
        }
      }
      for (const { name } of VARIANTS) {
        const rounds = byVariant.get(name) ?? [];
        cells.push({
          variant: name,
          concurrency,
          rounds,
          opsPerSec: median(rounds.map((r) => r.opsPerSec)),
          p50Ms: median(rounds.map((r) => r.p50Ms)),
          p99Ms: median(rounds.map((r) => r.p99Ms)),
          clientCpuPercent: median(rounds.map((r) => r.clientCpuPercent)),
          clientCpuMicrosPerOp: median(rounds.map((r) => r.clientCpuMicrosPerOp)),
          sandboxCpuPercent: median(rounds.map((r) => r.sandboxCpuPercent)),
        });
      }
    }
    return { cells, ratios: ratiosOf(cells, settings.concurrencies) };
  } finally {
    for (const variant of variants) await variant.close();
  }
}

/**
 * Each concurrency's ratios. Throughput: of the cells' medians. Client CPU: pooled over the rounds
 * with an interval, as row 6's (paired-ratio.ts): the ratio of the mean costs, which is what the
 * goal is about, and steadier from run to run than the ratio of two medians (README, row 1).
 */
export function ratiosOf(
  cells: readonly ThroughputCell[],
  concurrencies: readonly number[],
): ThroughputRatios[] {
  const find = (variant: VariantName, concurrency: number) =>
    cells.find((cell) => cell.variant === variant && cell.concurrency === concurrency);
  const rate = (variant: VariantName, concurrency: number) =>
    find(variant, concurrency)?.opsPerSec ?? Number.NaN;
  const cpuRounds = (variant: VariantName, concurrency: number) =>
    (find(variant, concurrency)?.rounds ?? []).map((round) => round.clientCpuMicrosPerOp);
  return concurrencies.map((concurrency) => {
    const ours = rate("ours", concurrency);
    const cpu = pairedRatio(cpuRounds("ours", concurrency), cpuRounds("raw-undici", concurrency));
    return {
      concurrency,
      oursOverRaw: ours / rate("raw-undici", concurrency),
      oursOverFetch: ours / rate("fetch", concurrency),
      oursOverAxios: ours / rate("axios", concurrency),
      oursCpuOverRaw: cpu.ratio,
      oursCpuOverRawInterval: cpu.interval,
    };
  });
}
