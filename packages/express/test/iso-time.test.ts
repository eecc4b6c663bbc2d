import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoString } from "../src/charges/iso-time.js";

// Charges store these texts (`firstSentAt` decides whether a key may be resent, `updatedAt` orders
// the reconciler's pages): they must be exactly what `toISOString` wrote before.

const MAX_TIME = 8.64e15;

describe("isoString", () => {
  it("writes what toISOString writes, for every time a Date can hold", () => {
    fc.assert(
      fc.property(fc.integer({ min: -MAX_TIME, max: MAX_TIME }), (ms) => {
        expect(isoString(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it("writes what toISOString writes around today, one millisecond after another", () => {
    const start = Date.UTC(2026, 11, 31, 23, 59, 58, 990);
    for (let ms = start; ms < start + 2_100; ms++) expect(isoString(ms)).toBe(new Date(ms).toISOString());
  });

  it("writes what toISOString writes at the edges: the epoch, the last ms of year -1, year 10000, the limits", () => {
    const edges = [0, -0, -1, 1, -1000, -1001, -62_167_219_200_001, 253_402_300_800_000];
    for (const ms of [...edges, MAX_TIME, -MAX_TIME, MAX_TIME - 1, -MAX_TIME + 1, 1.5, -1.5]) {
      expect(isoString(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it("throws the RangeError toISOString throws for an invalid time", () => {
    for (const ms of [Number.NaN, Number.POSITIVE_INFINITY, MAX_TIME + 1, -MAX_TIME - 1]) {
      expect(() => isoString(ms)).toThrow(RangeError);
    }
  });
});
