import { describe, expect, it } from "vitest";
import { pairedRatio } from "../bench/paired-ratio.js";

// Row 6's verdicts come from these numbers: the pooled ratio must be total over total (not a mean
// or median of per-round ratios), and the interval must reflect how much the paired rounds disagree.

describe("pairedRatio", () => {
  it("pools total over total, so a round that carries a collection counts in full", () => {
    // Per-round ratios 1.0, 1.0, 2.0: their median is 1.0, their mean 1.33; total over total 1.43.
    const { ratio } = pairedRatio([100, 100, 300], [100, 100, 150]);
    expect(ratio).toBeCloseTo(500 / 350, 10);
  });

  it("gives a zero-width interval when every pair agrees, and a wide one when they do not", () => {
    const steady = pairedRatio([110, 110, 110, 110, 110, 110], [100, 100, 100, 100, 100, 100]);
    expect(steady.ratio).toBeCloseTo(1.1, 10);
    expect(steady.interval[0]).toBeCloseTo(1.1, 10);
    expect(steady.interval[1]).toBeCloseTo(1.1, 10);

    const noisy = pairedRatio([80, 140, 100, 160, 90, 130], [100, 100, 100, 100, 100, 100]);
    expect(noisy.interval[0]).toBeLessThan(noisy.ratio);
    expect(noisy.interval[1]).toBeGreaterThan(noisy.ratio);
    expect(noisy.interval[0]).toBeGreaterThanOrEqual(0.8);
    expect(noisy.interval[1]).toBeLessThanOrEqual(1.6);
  });

  it("keeps each pair together when resampling: noise shared by both variants cancels", () => {
    // Both variants slow down together in some rounds (a busy machine): the ratio is 1.1 in each.
    const bare = [100, 300, 120, 250, 90, 400];
    const adapter = bare.map((value) => value * 1.1);
    const { interval } = pairedRatio(adapter, bare);
    expect(interval[0]).toBeCloseTo(1.1, 10);
    expect(interval[1]).toBeCloseTo(1.1, 10);
  });

  it("answers the same interval for the same rounds (seeded)", () => {
    const rounds = [
      [95, 130, 101, 170, 88],
      [100, 110, 99, 120, 105],
    ] as const;
    expect(pairedRatio(...rounds)).toEqual(pairedRatio(...rounds));
  });
});
