import { BigNumber } from "@medusajs/framework/utils";
import { describe, expect, it } from "vitest";
import { toCentsRounded, toWireAmount } from "../src/providers/purchase-auth/amounts";

describe("Medusa amounts to the service's amounts", () => {
  it("reads every form Medusa hands over, exactly", () => {
    expect(toWireAmount(10.5)).toBe("10.50");
    expect(toWireAmount("15")).toBe("15.00");
    expect(toWireAmount({ value: "15", precision: 20 })).toBe("15.00");
    expect(toWireAmount({ value: "120.5000000000", precision: 20 })).toBe("120.50");
    expect(toWireAmount(new BigNumber(33.33))).toBe("33.33");
    expect(toWireAmount(new BigNumber("0.1").bigNumber!.plus("0.2"))).toBe("0.30");
    expect(toWireAmount(0.1 + 0.2)).toBe("0.30");
    expect(toWireAmount(1e21)).toBe("1000000000000000000000.00");
    expect(toWireAmount("1.5e-7")).toBe("0.00");
    expect(toWireAmount("-4.90")).toBe("-4.90");
  });

  it("rounds half away from zero at the third decimal (Medusa keeps up to 20)", () => {
    expect(toCentsRounded("98.275")).toBe(9828n);
    expect(toCentsRounded("98.2749999")).toBe(9827n);
    expect(toCentsRounded({ value: "93.375", precision: 20 })).toBe(9338n);
    expect(toCentsRounded("-0.005")).toBe(-1n);
  });

  it("refuses what is not an amount", () => {
    for (const value of [undefined, null, "", "abc", Number.NaN, Number.POSITIVE_INFINITY, {}, "1,5"]) {
      expect(() => toCentsRounded(value)).toThrow(RangeError);
    }
  });
});
