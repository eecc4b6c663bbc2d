import { describe, expect, it } from "vitest";
import { ratiosOf, type ThroughputCell } from "../bench/rows/create-throughput.js";
import type { VariantName } from "../bench/variants/index.js";

// Row 1's client CPU ratio is ours / raw undici, pooled over the rounds: total µs over total µs,
// round i of one paired with round i of the other. Not the ratio of the two medians, which ignores
// how costly the other rounds were and moved more from run to run.

function cell(variant: VariantName, cpuMicrosPerRound: readonly number[], opsPerSec = 1_000): ThroughputCell {
  const rounds = cpuMicrosPerRound.map((clientCpuMicrosPerOp) => ({
    operations: 3_000,
    concurrency: 1,
    seconds: 3,
    opsPerSec,
    p50Ms: 1,
    p99Ms: 2,
    clientCpuPercent: 50,
    clientCpuMicrosPerOp,
    sandboxCpuPercent: 50,
  }));
  const sorted = [...cpuMicrosPerRound].sort((a, b) => a - b);
  return {
    variant,
    concurrency: 1,
    rounds,
    opsPerSec,
    p50Ms: 1,
    p99Ms: 2,
    clientCpuPercent: 50,
    clientCpuMicrosPerOp: sorted[Math.floor(sorted.length / 2)]!,
    sandboxCpuPercent: 50,
  };
}

const others = [cell("fetch", [400, 400, 400]), cell("axios", [300, 300, 300])];

describe("row 1's client CPU ratio", () => {
  it("is ours over raw, pooled over the rounds rather than a ratio of medians", () => {
    // Medians 120 / 100 = 1.2; pooled (120 + 120 + 300) / (100 + 100 + 100) = 1.8.
    const [ratio] = ratiosOf(
      [cell("ours", [120, 120, 300]), cell("raw-undici", [100, 100, 100]), ...others],
      [1],
    );
    expect(ratio!.oursCpuOverRaw).toBeCloseTo(1.8, 10);
    // Resampled, three cheap rounds (1.2) come up in 8 of 27 resamples and three costly ones (3.0) in
    // 1 of 27, so the 5th percentile is the least value and the 95th is 2.4, not the greatest.
    const [low, high] = ratio!.oursCpuOverRawInterval;
    expect(low).toBeCloseTo(1.2, 10);
    expect(high).toBeCloseTo(2.4, 10);
  });

  it("resamples the rounds in pairs: rounds whose ratios agree give an interval of that ratio", () => {
    // Each round 1.2: any resample of whole pairs is 1.2; resampling each side alone would not be.
    const [ratio] = ratiosOf(
      [cell("ours", [120, 120, 300]), cell("raw-undici", [100, 100, 250]), ...others],
      [1],
    );
    expect(ratio!.oursCpuOverRaw).toBeCloseTo(1.2, 10);
    expect(ratio!.oursCpuOverRawInterval[0]).toBeCloseTo(1.2, 10);
    expect(ratio!.oursCpuOverRawInterval[1]).toBeCloseTo(1.2, 10);
  });

  it("keeps its sides: a costlier client reads above 1", () => {
    const [ratio] = ratiosOf([cell("ours", [130, 130]), cell("raw-undici", [100, 100]), ...others], [1]);
    expect(ratio!.oursCpuOverRaw).toBeCloseTo(1.3, 10);
    expect(ratio!.oursCpuOverRawInterval[0]).toBeCloseTo(1.3, 10);
  });

  it("gives no interval for a single round rather than a certain-looking one", () => {
    const [ratio] = ratiosOf([cell("ours", [130]), cell("raw-undici", [100]), ...others], [1]);
    expect(ratio!.oursCpuOverRaw).toBeCloseTo(1.3, 10);
    expect(ratio!.oursCpuOverRawInterval.every(Number.isNaN)).toBe(true);
  });
});
