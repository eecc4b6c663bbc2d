import { formatCents, toCents } from "@purchase-auth/core";
import { toCentsRounded } from "./amounts";

/** One item of the service's order, amounts as exact decimal text. */
export interface OrderLine {
  /** Article id (SKU, else Medusa's id), at most 50 characters. */
  id: string;
  /** Shown on the receipt; the service keeps 50 characters. */
  description: string;
  /** Unit price including VAT, 2 decimals. */
  unitPrice: string;
  quantity: number;
  /** VAT percent, at most 2 decimals. */
  vat: string;
}

/** The parts of a Medusa cart that order lines are made of (all read server-side). */
export interface CartForOrderLines {
  items?: Array<{
    id: string;
    title?: string | null;
    product_title?: string | null;
    variant_sku?: string | null;
    quantity: unknown;
    /** The line's total after discounts, tax included. */
    total: unknown;
    tax_lines?: Array<{ rate?: unknown } | null> | null;
  } | null> | null;
  shipping_methods?: Array<{
    id: string;
    name?: string | null;
    total: unknown;
    tax_lines?: Array<{ rate?: unknown } | null> | null;
  } | null> | null;
}

/**
 * The query fields `CartForOrderLines` is read with, for a cart or an order alike (ask for the
 * `total` of the cart or order too: that is what makes Medusa compute the line and shipping totals).
 */
export const ORDER_LINE_FIELDS: readonly string[] = [
  "items.id",
  "items.title",
  "items.product_title",
  "items.variant_sku",
  "items.quantity",
  "items.total",
  "items.tax_lines.rate",
  "shipping_methods.id",
  "shipping_methods.name",
  "shipping_methods.total",
  "shipping_methods.tax_lines.rate",
];

const MAX_ID_LENGTH = 50;
const MAX_QUANTITY = 99_999_999;

/** Sum of the tax rates of a line (Medusa rates are percents), rounded to 2 decimals. */
function vatOf(taxLines: Array<{ rate?: unknown } | null> | null | undefined): string {
  let hundredths = 0n;
  for (const line of taxLines ?? []) {
    if (line?.rate === undefined || line.rate === null) continue;
    hundredths += toCentsRounded(line.rate);
  }
  if (hundredths < 0n || hundredths > 10_000n) throw new RangeError("VAT outside 0 to 100");
  return formatCents(hundredths);
}

/**
 * Lines of `quantity` units whose prices add up to exactly `totalCents`: one line when the total
 * divides evenly, otherwise two, the second one cent dearer per unit (3 for 10.00 → 2 × 3.33 + 1 × 3.34).
 */
function linesFor(
  base: Omit<OrderLine, "unitPrice" | "quantity">,
  quantity: number,
  totalCents: bigint,
): OrderLine[] {
  const count = BigInt(quantity);
  const unit = totalCents / count;
  const remainder = totalCents - unit * count;
  if (remainder === 0n) return [{ ...base, unitPrice: formatCents(unit), quantity }];
  return [
    { ...base, unitPrice: formatCents(unit), quantity: Number(count - remainder) },
    { ...base, unitPrice: formatCents(unit + 1n), quantity: Number(remainder) },
  ];
}

function wholeQuantity(value: unknown): number | undefined {
  const quantity = typeof value === "number" ? value : Number(value);
  return Number.isInteger(quantity) && quantity >= 1 && quantity <= MAX_QUANTITY ? quantity : undefined;
}

/**
 * The cart's items and shipping as order lines, or undefined when the cart has something they
 * cannot express (a quantity outside 1–99,999,999, a negative total, a VAT above 100).
 */
export function orderLinesFromCart(cart: CartForOrderLines): OrderLine[] | undefined {
  try {
    const lines: OrderLine[] = [];
    for (const item of cart.items ?? []) {
      if (!item) continue;
      const quantity = wholeQuantity(item.quantity);
      const total = toCentsRounded(item.total);
      if (quantity === undefined || total < 0n) return undefined;
      const id = (item.variant_sku?.trim() || item.id).slice(0, MAX_ID_LENGTH);
      const description = item.product_title?.trim() || item.title?.trim() || id;
      lines.push(...linesFor({ id, description, vat: vatOf(item.tax_lines) }, quantity, total));
    }
    for (const method of cart.shipping_methods ?? []) {
      if (!method) continue;
      const total = toCentsRounded(method.total);
      if (total < 0n) return undefined;
      const description = method.name?.trim() || "Shipping";
      lines.push({
        id: method.id.slice(0, MAX_ID_LENGTH),
        description,
        unitPrice: formatCents(total),
        quantity: 1,
        vat: vatOf(method.tax_lines),
      });
    }
    return lines.length > 0 ? lines : undefined;
  } catch {
    return undefined;
  }
}

/** Sum of unitPrice × quantity, in cents. */
export function totalCentsOf(lines: ReadonlyArray<OrderLine>): bigint {
  return lines.reduce((sum, line) => sum + toCents(line.unitPrice) * BigInt(line.quantity), 0n);
}

export interface ItemsForAuthorization {
  lines: OrderLine[];
  /** True when the cart's lines are sent, false when one line stands for the whole amount. */
  fromCart: boolean;
}

/**
 * The items to send for `amount`: the cart's lines when they add up to it exactly (to the cent),
 * otherwise one line for the whole amount with the default VAT. The service charges the sum of
 * the items, so this is what keeps the charge equal to what Medusa authorizes.
 */
export function itemsForAuthorization(
  cartLines: ReadonlyArray<OrderLine> | null,
  amount: string,
  single: { id: string; description: string; vat: string },
): ItemsForAuthorization {
  const amountCents = toCents(amount);
  if (cartLines && cartLines.length > 0 && totalCentsOf(cartLines) === amountCents) {
    return { lines: cartLines.map((line) => ({ ...line })), fromCart: true };
  }
  return {
    lines: [
      {
        id: single.id.slice(0, MAX_ID_LENGTH),
        description: single.description,
        unitPrice: amount,
        quantity: 1,
        vat: single.vat,
      },
    ],
    fromCart: false,
  };
}
