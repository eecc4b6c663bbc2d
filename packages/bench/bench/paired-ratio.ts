// The ratio of two variants measured in interleaved rounds (round i of one right beside round i of
// the other), and how far it can be trusted on a shared, noisy machine.
//
// Pooled, not the median of the rounds' ratios: a round's CPU time swings with whether a
// young-generation collection (15–25 ms in an Express app) fell inside it, so the median of per-round
// ratios drops exactly the rounds that carry the garbage collector's cost, and moved by ±0.2 from
// run to run. The pooled ratio (total cost over total cost) is the ratio of the means, the figure a
// goal on "CPU per charge" is about; the interval says how much the rounds disagree.

export interface PairedRatio {
  /** Σ numerator / Σ denominator over all rounds. */
  ratio: number;
  /**
   * 5th and 95th percentiles of the pooled ratio over rounds resampled in pairs (a percentile
   * bootstrap: over 12 rounds it holds the true ratio ~85% of the time, not quite 90%). NaN for
   * fewer than two rounds.
   */
  interval: [number, number];
}

const RESAMPLES = 2_000;

/**
 * The pooled ratio of `numerator` to `denominator` (same length, index i measured side by side) and
 * its 90% paired-bootstrap interval. Seeded, so the same rounds always give the same interval.
 */
export function pairedRatio(numerator: readonly number[], denominator: readonly number[]): PairedRatio {
  const rounds = Math.min(numerator.length, denominator.length);
  const ratio = sum(numerator, rounds) / sum(denominator, rounds);
  // One round says nothing about the spread: no interval rather than a certain-looking one.
  if (rounds < 2) return { ratio, interval: [Number.NaN, Number.NaN] };
  const random = seededRandom(rounds);
  const resampled = new Float64Array(RESAMPLES);
  for (let sample = 0; sample < RESAMPLES; sample++) {
    let top = 0;
    let bottom = 0;
    for (let draw = 0; draw < rounds; draw++) {
      const round = Math.floor(random() * rounds);
      top += numerator[round]!;
      bottom += denominator[round]!;
    }
    resampled[sample] = top / bottom;
  }
  resampled.sort();
  return {
    ratio,
    interval: [resampled[Math.floor(RESAMPLES * 0.05)]!, resampled[Math.floor(RESAMPLES * 0.95)]!],
  };
}

function sum(values: readonly number[], count: number): number {
  let total = 0;
  for (let index = 0; index < count; index++) total += values[index]!;
  return total;
}

/** mulberry32: a small deterministic generator, enough for resampling. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
