// Timing primitives: a fixed number of operations at a fixed concurrency, per-operation latency,
// and the median over repeated rounds.

export interface CellResult {
  operations: number;
  concurrency: number;
  seconds: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * Runs `operations` calls of `op`, at most `concurrency` at a time (workers that each start the
 * next call when theirs finishes), and records each call's latency. Any failure aborts the run:
 * a benchmark of errors measures nothing.
 */
export async function runCell(
  op: () => Promise<unknown>,
  options: { operations: number; concurrency: number },
): Promise<CellResult> {
  const { operations, concurrency } = options;
  const latencies = new Float64Array(operations);
  let started = 0;
  const worker = async () => {
    while (started < operations) {
      const index = started++;
      const t0 = performance.now();
      await op();
      latencies[index] = performance.now() - t0;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, operations) }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort();
  return {
    operations,
    concurrency,
    seconds,
    opsPerSec: operations / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
  };
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: Float64Array, fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(fraction * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Runs a synchronous function `iterations` times; operations per second. */
export function opsPerSecondOf(fn: () => unknown, iterations: number): number {
  let sink: unknown;
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) sink = fn();
  const seconds = (performance.now() - t0) / 1000;
  if (sink === undefined) throw new Error("the measured function returned nothing");
  return iterations / seconds;
}

/** `items` rotated left by `by`, so each round starts with another variant. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = ((by % items.length) + items.length) % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
