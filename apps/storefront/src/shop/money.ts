import { formatCents, toCents } from "@purchase-auth/core";

// Amounts stay decimal strings ("24.90"); sums are exact integer cents in between (core's helpers).

/** unitPrice × quantity, exactly. */
export function multiply(unitPrice: string, quantity: number): string {
  return formatCents(toCents(unitPrice) * BigInt(quantity));
}

/** The exact sum of decimal strings. */
export function sum(amounts: readonly string[]): string {
  return formatCents(amounts.reduce((total, amount) => total + toCents(amount), 0n));
}

/** a − b, exactly (may be negative). */
export function subtract(a: string, b: string): string {
  return formatCents(toCents(a) - toCents(b));
}

export function isPositive(amount: string): boolean {
  return toCents(amount) > 0n;
}

const formatters = new Map<string, Intl.NumberFormat>();

/** "€24.90" for display. The string goes to Intl as it is (exact decimal), never through a float. */
export function formatMoney(amount: string, currency: string): string {
  let formatter = formatters.get(currency);
  if (!formatter) {
    formatter = new Intl.NumberFormat("en-IE", { style: "currency", currency });
    formatters.set(currency, formatter);
  }
  return formatter.format(amount as Intl.StringNumericLiteral);
}
