import { describe, expect, it } from "vitest";
import { type ExpressAdapterCell, ratiosOf } from "../bench/rows/express-adapter.js";

// Row 6's ratios are adapter / bare: a throughput below 1 and a CPU ratio above 1 mean the adapter
// is the slower, costlier one. A swap of the two sides would flip every verdict.

function cell(variant: "adapter" | "bare", opsPerSec: number, appCpuMicrosPerOp: number): ExpressAdapterCell {
  const round = {
    operations: 600,
    concurrency: 16,
    seconds: 600 / opsPerSec,
    opsPerSec,
    p50Ms: 1,
    p99Ms: 2,
    appCpuPercent: 100,
    appCpuMicrosPerOp,
    sandboxCpuPercent: 30,
    loadGeneratorCpuPercent: 20,
  };
  // Three equal rounds; the cell's medians are the round's own figures.
  const { operations: _operations, seconds: _seconds, ...medians } = round;
  return { variant, rounds: [round, round, round], ...medians };
}

describe("row 6's ratios", () => {
  it("are adapter over bare: a slower, costlier adapter has throughput < 1 and CPU > 1", () => {
    const [ratio] = ratiosOf([cell("adapter", 3_000, 330), cell("bare", 3_300, 300)], [16]);
    expect(ratio!.adapterOverBare).toBeCloseTo(3_000 / 3_300, 10);
    expect(ratio!.adapterCpuOverBare).toBeCloseTo(1.1, 10);
    expect(ratio!.adapterCpuOverBareInterval[0]).toBeCloseTo(1.1, 10);
  });

  it("give no interval for a single round rather than a certain-looking one", () => {
    const one = (c: ExpressAdapterCell) => ({ ...c, rounds: c.rounds.slice(0, 1) });
    const [ratio] = ratiosOf([one(cell("adapter", 3_000, 330)), one(cell("bare", 3_300, 300))], [16]);
    expect(ratio!.adapterCpuOverBare).toBeCloseTo(1.1, 10);
    expect(ratio!.adapterCpuOverBareInterval.every(Number.isNaN)).toBe(true);
  });
});
