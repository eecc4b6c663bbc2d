// Exact decimal arithmetic for money. Amounts travel as decimal strings ("120.50") and are held as
// integer hundredths (bigint) in between, so no value ever passes through binary floating point.

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** True when `value` is a plain decimal string: optional minus, digits, optional fraction. */
export function isDecimalString(value: string): boolean {
  return DECIMAL.test(value);
}

/** Number of digits after the decimal point of a decimal string ("1.50" → 2, "7" → 0). */
export function fractionDigits(value: string): number {
  if (!DECIMAL.test(value)) throw new RangeError(`"${value}" is not a decimal number`);
  return digitsAfterPoint(value);
}

/** `fractionDigits` of a string already known to be a decimal string (a schema checked it). */
export function digitsAfterPoint(decimal: string): number {
  const point = decimal.indexOf(".");
  return point === -1 ? 0 : decimal.length - point - 1;
}

/**
 * Parses a decimal string with at most `scale` fraction digits into an integer scaled by 10^scale.
 * `toScaledInteger("12.5", 2)` is `1250n`. Throws a RangeError when the value has more digits.
 */
export function toScaledInteger(value: string, scale: number): bigint {
  const match = DECIMAL.exec(value);
  if (!match) throw new RangeError(`"${value}" is not a decimal number`);
  const [, sign, whole = "0", fraction = ""] = match;
  if (fraction.length > scale) {
    throw new RangeError(`"${value}" has more than ${scale} decimal${scale === 1 ? "" : "s"}`);
  }
  const magnitude = BigInt(whole + fraction.padEnd(scale, "0"));
  return sign === "-" ? -magnitude : magnitude;
}

/** Formats an integer scaled by 10^scale as a decimal string with exactly `scale` fraction digits. */
export function fromScaledInteger(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale);
  return `${negative ? "-" : ""}${whole}${scale > 0 ? `.${fraction}` : ""}`;
}

/** Parses an amount ("10.5", "-3", "0.07") into integer cents. At most 2 decimals. */
export function toCents(amount: string): bigint {
  return toScaledInteger(amount, 2);
}

/** Formats integer cents as the wire form of an amount: `1050n` → "10.50". */
export function formatCents(cents: bigint): string {
  return fromScaledInteger(cents, 2);
}

/**
 * Converts a number or string a caller gave us into a decimal string without rounding.
 * Numbers use their shortest round-trip form (what `String(n)` prints), so `0.1 + 0.2` stays
 * "0.30000000000000004" and is then rejected for having too many decimals, never silently rounded.
 * Returns undefined for values that are not finite numbers or decimal strings.
 */
export function decimalStringOf(value: unknown): string | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return undefined;
    const text = String(value);
    return isDecimalString(text) ? text : undefined;
  }
  // A bigint is refused: it is what toMinorUnits returns, and read as major units it would charge
  // 100 times too much. Convert with fromMinorUnits(value, currency) first.
  if (typeof value === "string" && isDecimalString(value)) return value;
  return undefined;
}

/**
 * Normalises an amount to the canonical wire form with exactly 2 decimals ("10.5" → "10.50").
 * Throws a RangeError for anything that is not an exact decimal with at most 2 decimals.
 */
export function normalizeAmount(value: string | number | bigint): string {
  const text = decimalStringOf(value);
  if (text === undefined) throw new RangeError(`${String(value)} is not a decimal amount`);
  return formatCents(toCents(text));
}
