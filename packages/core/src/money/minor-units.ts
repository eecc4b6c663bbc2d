import { currencyExponent } from "./currencies.js";
import { decimalStringOf, fromScaledInteger, toScaledInteger } from "./decimal.js";

/**
 * Converts a major-unit amount to the currency's minor units, exactly.
 * `toMinorUnits("10.50", "EUR")` is `1050n`; `toMinorUnits("100", "JPY")` is `100n`.
 * Throws a RangeError when the amount has more decimals than the currency has.
 */
export function toMinorUnits(amount: string | number, currency: string): bigint {
  const text = decimalStringOf(amount);
  if (text === undefined) throw new RangeError(`${String(amount)} is not a decimal amount`);
  return toScaledInteger(text, currencyExponent(currency));
}

/**
 * Converts minor units to a major-unit decimal string with the currency's number of decimals.
 * `fromMinorUnits(1050, "EUR")` is "10.50"; `fromMinorUnits(100, "JPY")` is "100".
 */
export function fromMinorUnits(minor: bigint | number, currency: string): string {
  if (typeof minor === "number" && !Number.isSafeInteger(minor)) {
    throw new RangeError(`${minor} is not a whole number of minor units`);
  }
  return fromScaledInteger(BigInt(minor), currencyExponent(currency));
}
