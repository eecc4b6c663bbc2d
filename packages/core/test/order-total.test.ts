import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { orderTotalCents, toCents } from "../src/index.js";

// orderTotalCents adds small amounts up as doubles and everything else as bigint: for every input
// it must answer exactly what bigint alone answers, undefined included, reading each item once.

type Items = ReadonlyArray<{ unitPrice: string; quantity: string }>;

/** The total by bigint alone, as core computed it before: the answer the fast way must give. */
function exactTotalCents(items: Items): bigint | undefined {
  let total = 0n;
  for (const { unitPrice, quantity } of items) {
    try {
      total += toCents(unitPrice) * BigInt(quantity);
    } catch {
      return undefined;
    }
  }
  return total;
}

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });

/** A number written with 0 to 4 decimals, perhaps with leading zeros: "-0.07", "007.5", "12". */
const writtenNumber = (maxDecimals: number) =>
  fc
    .tuple(
      fc.oneof(
        fc.integer({ min: -999, max: 999 }).map(BigInt),
        fc.integer({ min: -100_000, max: 100_000 }).map(BigInt),
        fc.bigInt(-(10n ** 20n), 10n ** 20n),
      ),
      fc.integer({ min: 0, max: maxDecimals }),
      fc.constantFrom("", "0", "00"),
    )
    .map(([value, decimals, zeros]) => writtenAs(value, decimals, zeros));

/** The integer `value` with `decimals` digits after the point (-7 and 2: "-0.07"), after `zeros`. */
function writtenAs(value: bigint, decimals: number, zeros: string): string {
  const negative = value < 0n;
  const digitsOf = (negative ? -value : value).toString().padStart(decimals + 1, "0");
  const whole = digitsOf.slice(0, digitsOf.length - decimals);
  const fraction = decimals === 0 ? "" : `.${digitsOf.slice(digitsOf.length - decimals)}`;
  return `${negative ? "-" : ""}${zeros}${whole}${fraction}`;
}

/** Decimal strings of every length around the fast way's limits, and near misses of the form. */
const amountText = fc.oneof(
  writtenNumber(4),
  fc
    .tuple(fc.constantFrom("", "-"), digits(1, 20), fc.constantFrom("", "."), digits(0, 4))
    .map(([sign, whole, point, fraction]) => `${sign}${whole}${point}${fraction}`),
  fc.constantFrom(
    "",
    "-",
    ".",
    "1.",
    ".5",
    "+5",
    " 5",
    "5 ",
    "1e3",
    "0x10",
    "-0",
    "-0.00",
    "00.10",
    "１２",
    "1.2.3",
    "--1",
    "9007199254740993",
    "90071992547409.93",
    "9999999999999.99",
    "-9999999999999.99",
    "99999999999999.99",
  ),
  fc.string({ maxLength: 6 }),
);

/** Mostly items the fast way takes (a whole array falls back when one item does not). */
const item = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ unitPrice: writtenNumber(2), quantity: writtenNumber(0) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      unitPrice: amountText,
      quantity: fc.oneof(writtenNumber(4), amountText, digits(1, 17)),
    }),
  },
);

describe("orderTotalCents", () => {
  it("answers what bigint alone answers, for any items", () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 5 }), (items) => {
        expect(orderTotalCents(items)).toBe(exactTotalCents(items));
      }),
      { numRuns: 5_000 },
    );
  });

  it("answers what bigint alone answers for every small amount, written every way", () => {
    for (let value = -250; value <= 250; value++) {
      for (const decimals of [0, 1, 2, 3]) {
        for (const zeros of ["", "0"]) {
          const written = writtenAs(BigInt(value), decimals, zeros);
          for (const quantity of ["3", "-2", "0"]) {
            const items = [{ unitPrice: written, quantity }];
            expect(orderTotalCents(items), written).toBe(exactTotalCents(items));
          }
        }
      }
    }
  });

  it("is exact where a double would round: past 2^53 in a line or in the sum", () => {
    // 90,071,992,547,409.93 × 1 is 2^53 + 1 cents: a double cannot hold it.
    expect(orderTotalCents([{ unitPrice: "90071992547409.93", quantity: "1" }])).toBe(9007199254740993n);
    const line = { unitPrice: "9999999999999.99", quantity: "99999999" };
    expect(orderTotalCents([line])).toBe(999999999999999n * 99999999n);
    // Two lines a double holds, whose sum (2^53 + 1) it does not.
    const lines = [
      { unitPrice: "9999999999999.99", quantity: "9" },
      { unitPrice: "71992547410.02", quantity: "1" },
    ];
    expect(orderTotalCents(lines)).toBe(9007199254740993n);
    // A line a double cannot hold whose sum with the next one it could.
    const back = [
      { unitPrice: "-4416505.91", quantity: "20394401" },
      { unitPrice: "9007199254740.99", quantity: "11" },
    ];
    expect(orderTotalCents(back)).toBe(-9007199254740991n + 900719925474099n * 11n);
    expect(orderTotalCents(back)).toBe(exactTotalCents(back));
  });

  it("adds small amounts, discounts and whole prices as cents", () => {
    const items = [
      { unitPrice: "24.90", quantity: "2" },
      { unitPrice: "-5", quantity: "1" },
      { unitPrice: "0.5", quantity: "3" },
      { unitPrice: "-0.07", quantity: "2" },
    ];
    expect(orderTotalCents(items)).toBe(4980n - 500n + 150n - 14n);
    expect(orderTotalCents([])).toBe(0n);
  });

  it("is undefined for an amount with more than 2 decimals or a quantity that is not whole", () => {
    expect(orderTotalCents([{ unitPrice: "1.234", quantity: "1" }])).toBeUndefined();
    expect(orderTotalCents([{ unitPrice: "1.23", quantity: "1.5" }])).toBeUndefined();
    expect(orderTotalCents([{ unitPrice: "1e3", quantity: "1" }])).toBeUndefined();
  });

  it("reads what for…of reads: sets, generators and arrays with their own iterator alike", () => {
    const line = { unitPrice: "5", quantity: "1" };
    const asItems = (value: unknown) => value as Items;
    expect(orderTotalCents(asItems(new Set([line])))).toBe(500n);
    expect(
      orderTotalCents(
        asItems(
          (function* () {
            yield line;
            yield { unitPrice: "1.5", quantity: "2" };
          })(),
        ),
      ),
    ).toBe(800n);
    const own = [line];
    Object.defineProperty(own, Symbol.iterator, {
      value: function* () {
        yield { unitPrice: "7", quantity: "1" };
      },
    });
    expect(orderTotalCents(own)).toBe(exactTotalCents(own));
    expect(() => orderTotalCents(asItems({ length: 1, 0: line }))).toThrow(TypeError);
    expect(() => orderTotalCents(asItems(null))).toThrow(TypeError);
  });

  it("throws what bigint alone throws for a missing item", () => {
    const items = [{ unitPrice: "1", quantity: "1" }, null] as unknown as Items;
    let expected: unknown;
    try {
      exactTotalCents(items);
    } catch (error) {
      expected = error;
    }
    expect(expected).toBeInstanceOf(TypeError);
    expect(() => orderTotalCents(items)).toThrow((expected as Error).message);
  });

  it("reads each item's amounts once, also when it goes on in bigint", () => {
    const reads: string[] = [];
    const counted = (name: string, unitPrice: string, quantity: string) => ({
      get unitPrice() {
        reads.push(`${name}.unitPrice`);
        return unitPrice;
      },
      get quantity() {
        reads.push(`${name}.quantity`);
        return quantity;
      },
    });
    // " 2" is not a form the fast way takes: the sum goes on in bigint from the second item.
    const items = [counted("a", "1.00", "1"), counted("b", "1", " 2"), counted("c", "0.50", "3")];
    expect(orderTotalCents(items)).toBe(100n + 200n + 150n);
    expect(reads).toEqual([
      "a.unitPrice",
      "a.quantity",
      "b.unitPrice",
      "b.quantity",
      "c.unitPrice",
      "c.quantity",
    ]);
  });
});
