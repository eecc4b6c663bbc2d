import { formatCents } from "@purchase-auth/core";

// Medusa hands amounts over in several forms: a number (10.5), a string ("10.5"), its BigNumber
// class, a bignumber.js value, or the raw object it stores ({ value: "15", precision: 20 }). All are
// read as decimal text and turned into integer cents, so no amount ever passes through a float.

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;

/** The decimal text of any of Medusa's amount forms, or undefined when it is none of them. */
export function decimalTextOf(value: unknown): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") return value.trim();
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  // bignumber.js (also Medusa's BigNumber.bigNumber): toFixed() prints every digit, no exponent.
  if (typeof record.toFixed === "function" && (record._isBigNumber === true || "c" in record)) {
    return (record.toFixed as () => string)();
  }
  // Medusa's BigNumber keeps the exact value in `raw`; a stored amount is the raw object itself.
  if (typeof record.raw === "object" && record.raw !== null) return decimalTextOf(record.raw);
  if ("value" in record) return decimalTextOf(record.value);
  if (typeof record.bigNumber === "object" && record.bigNumber !== null)
    return decimalTextOf(record.bigNumber);
  return undefined;
}

/**
 * Converts a Medusa amount (major units) to integer cents, rounding half away from zero at the
 * third decimal (Medusa computes totals with up to 20 decimals; the service takes 2).
 */
export function toCentsRounded(value: unknown): bigint {
  const textValue = decimalTextOf(value);
  const match = textValue === undefined ? null : DECIMAL.exec(textValue);
  if (!match || (match[2] === "" && (match[3] ?? "") === "")) {
    throw new RangeError(`${describe(value)} is not an amount`);
  }
  const [, sign = "", whole = "", fraction = "", exponentText] = match;
  // Shift the decimal point by the exponent, on the digits themselves.
  let digits = `${whole}${fraction}`;
  let point = whole.length + Number(exponentText ?? 0);
  if (point < 0) {
    digits = "0".repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits += "0".repeat(point - digits.length);
  const integerPart = digits.slice(0, point) || "0";
  const fractionPart = digits.slice(point).padEnd(3, "0");
  let cents = BigInt(integerPart) * 100n + BigInt(fractionPart.slice(0, 2));
  if (Number(fractionPart[2]) >= 5) cents += 1n;
  return sign === "-" ? -cents : cents;
}

/** The service's wire form of a Medusa amount: "10.50". */
export function toWireAmount(value: unknown): string {
  return formatCents(toCentsRounded(value));
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Digits kept when adding Medusa amounts exactly (Medusa computes with up to 20 decimals). */
const SUM_SCALE = 20;

/**
 * The exact sum of Medusa amounts, as decimal text (no rounding, no float). Partial captures are
 * summed first and rounded once, so their rounded total never drifts from the order's total.
 */
export function sumExact(values: ReadonlyArray<unknown>): string {
  let total = 0n;
  for (const value of values) {
    const textValue = decimalTextOf(value);
    const match = textValue === undefined ? null : DECIMAL.exec(textValue);
    if (!match || (match[2] === "" && (match[3] ?? "") === "")) {
      throw new RangeError(`${describe(value)} is not an amount`);
    }
    const [, sign = "", whole = "", fraction = "", exponentText] = match;
    let digits = `${whole}${fraction}`;
    let point = whole.length + Number(exponentText ?? 0);
    if (point < 0) {
      digits = "0".repeat(-point) + digits;
      point = 0;
    }
    if (point > digits.length) digits += "0".repeat(point - digits.length);
    const scaled = BigInt(
      `${digits.slice(0, point) || "0"}${digits.slice(point).padEnd(SUM_SCALE, "0").slice(0, SUM_SCALE)}`,
    );
    total += sign === "-" ? -scaled : scaled;
  }
  const negative = total < 0n;
  const text = (negative ? -total : total).toString().padStart(SUM_SCALE + 1, "0");
  return `${negative ? "-" : ""}${text.slice(0, -SUM_SCALE)}.${text.slice(-SUM_SCALE)}`;
}
