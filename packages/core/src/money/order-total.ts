import { toCents } from "./decimal.js";

// The exact total of an order's items, in cents. Every create call computes it (the schema refuses
// a total of nothing, adapters store it), and with bigint from a regular expression's captures it
// was a tenth of the request's whole check. Nearly every order's amounts fit a double exactly, so
// they are added up as whole numbers of cents there; from the first item that does not fit, the
// sum goes on in bigint. Each item is read once, in order, as `for…of` reads it. The answer is the
// bigint one for every input (test/order-total.test.ts).

/** Sum of unitPrice × quantity in cents, or undefined while any item is still invalid. */
export function orderTotalCents(
  items: ReadonlyArray<{ unitPrice: string; quantity: string }>,
): bigint | undefined {
  /** The sum so far in whole cents, exact while it is a safe integer. */
  let total = 0;
  /** The sum so far once an item did not fit a double: bigint from there on. */
  let exact: bigint | undefined;
  for (const { unitPrice, quantity } of items) {
    if (exact === undefined) {
      const cents = typeof unitPrice === "string" ? smallCents(unitPrice) : undefined;
      const count = typeof quantity === "string" ? smallWholeNumber(quantity) : undefined;
      if (cents !== undefined && count !== undefined) {
        const line = cents * count;
        const sum = total + line;
        // A product or sum past 2^53 is never rounded back to a safe integer: this check is exact.
        if (Number.isSafeInteger(line) && Number.isSafeInteger(sum)) {
          total = sum;
          continue;
        }
      }
      exact = BigInt(total);
    }
    try {
      exact += toCents(unitPrice) * BigInt(quantity);
    } catch {
      return undefined;
    }
  }
  return exact ?? BigInt(total);
}

/** Digits a double holds exactly with room to spare: 10^15 < 2^53. */
const MAX_DIGITS = 15;
const ZERO = 48;
const NINE = 57;
const MINUS = 45;
const POINT = 46;

/**
 * `-?\d+(\.\d{1,2})?` with at most 13 whole digits, as whole cents; undefined for anything else
 * (the bigint way then decides, and refuses what toCents refuses).
 */
function smallCents(value: string): number | undefined {
  const negative = value.charCodeAt(0) === MINUS;
  let index = negative ? 1 : 0;
  const wholeStart = index;
  let whole = 0;
  for (; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code < ZERO || code > NINE) break;
    whole = whole * 10 + (code - ZERO);
  }
  const wholeDigits = index - wholeStart;
  if (wholeDigits === 0 || wholeDigits > MAX_DIGITS - 2) return undefined;
  let cents = whole * 100;
  if (index < value.length) {
    if (value.charCodeAt(index) !== POINT) return undefined;
    const fraction = value.length - index - 1;
    if (fraction < 1 || fraction > 2) return undefined;
    const tenths = digitAt(value, index + 1);
    const hundredths = fraction === 2 ? digitAt(value, index + 2) : 0;
    if (tenths === undefined || hundredths === undefined) return undefined;
    cents += tenths * 10 + hundredths;
  }
  return negative ? -cents : cents;
}

/** `-?\d+` with at most 15 digits, as a number; undefined for anything else. */
function smallWholeNumber(value: string): number | undefined {
  const negative = value.charCodeAt(0) === MINUS;
  const start = negative ? 1 : 0;
  if (value.length === start || value.length - start > MAX_DIGITS) return undefined;
  let number = 0;
  for (let index = start; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code < ZERO || code > NINE) return undefined;
    number = number * 10 + (code - ZERO);
  }
  return negative ? -number : number;
}

function digitAt(value: string, index: number): number | undefined {
  const code = value.charCodeAt(index);
  return code >= ZERO && code <= NINE ? code - ZERO : undefined;
}
