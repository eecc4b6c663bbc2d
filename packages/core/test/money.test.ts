import { describe, expect, it } from "vitest";
import {
  currencyExponent,
  formatCents,
  fromMinorUnits,
  normalizeAmount,
  toCents,
  toMinorUnits,
} from "../src/index.js";

describe("exact decimals", () => {
  it("parses and formats cents without floating point", () => {
    expect(toCents("0.1") + toCents("0.2")).toBe(toCents("0.3"));
    expect(formatCents(toCents("0.1") + toCents("0.2"))).toBe("0.30");
    expect(formatCents(-5n)).toBe("-0.05");
    expect(formatCents(123456789012345678901234567890n)).toBe("1234567890123456789012345678.90");
  });

  it("normalises amounts to 2 decimals and refuses to round", () => {
    expect(normalizeAmount("10.5")).toBe("10.50");
    expect(normalizeAmount(7)).toBe("7.00");
    // A bigint is refused: toMinorUnits returns one, and read as major units it would be 100x.
    expect(() => normalizeAmount(10n)).toThrow(RangeError);
    expect(() => normalizeAmount(0.1 + 0.2)).toThrow(/more than 2 decimals/);
    expect(() => normalizeAmount("1e3")).toThrow(RangeError);
    expect(() => normalizeAmount(Number.NaN)).toThrow(RangeError);
  });
});

describe("minor units", () => {
  it("uses each currency's ISO 4217 exponent", () => {
    expect(currencyExponent("EUR")).toBe(2);
    expect(currencyExponent("jpy")).toBe(0);
    expect(currencyExponent("KWD")).toBe(3);
    expect(() => currencyExponent("XXY")).toThrow(/Unknown currency/);
  });

  it("converts both ways exactly", () => {
    expect(toMinorUnits("10.50", "EUR")).toBe(1050n);
    expect(toMinorUnits(19.99, "EUR")).toBe(1999n);
    expect(toMinorUnits("100", "JPY")).toBe(100n);
    expect(toMinorUnits("1.234", "KWD")).toBe(1234n);
    expect(fromMinorUnits(1050, "EUR")).toBe("10.50");
    expect(fromMinorUnits(100n, "JPY")).toBe("100");
    expect(fromMinorUnits(-1, "SEK")).toBe("-0.01");
  });

  it("refuses amounts finer than the currency allows", () => {
    expect(() => toMinorUnits("100.5", "JPY")).toThrow(RangeError);
    expect(() => fromMinorUnits(1.5, "EUR")).toThrow(RangeError);
  });
});
