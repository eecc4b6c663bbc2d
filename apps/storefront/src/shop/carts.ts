import { randomBytes, randomUUID } from "node:crypto";
import { CURRENCY, findProduct, type Product } from "./catalogue.js";
import { multiply, sum } from "./money.js";

// Carts live on the server, keyed by an id the session holds. Each cart carries the order
// reference it will be charged under: one cart, one reference, one charge (the middleware derives
// the idempotency key from it, so a double click or a retried request charges once).

export interface CartLine {
  sku: string;
  quantity: number;
}

export interface Cart {
  id: string;
  /** The order reference this cart is paid under (at most 50 characters). */
  reference: string;
  lines: CartLine[];
  /** The customer who started paying for it; only they may pay for it or look it up again. */
  customerId?: string;
}

/** A cart line with its server-side price. */
export interface PricedLine {
  product: Product;
  quantity: number;
  lineTotal: string;
}

export interface PricedCart {
  lines: PricedLine[];
  /** VAT included. */
  total: string;
  currency: string;
  itemCount: number;
}

export const MAX_QUANTITY = 99;

// Unambiguous characters: a reference or an id is read out over the phone to customer service.
const READABLE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ";

/** `prefix` and `length` random characters a person can read out without confusion ("HB-7K3QX9M2TD"). */
export function readableCode(prefix: string, length: number): string {
  let suffix = "";
  for (const byte of randomBytes(length)) suffix += READABLE_ALPHABET[byte % READABLE_ALPHABET.length];
  return `${prefix}${suffix}`;
}

/**
 * A random order reference, e.g. "HB-7K3QX9M2TD". Random rather than a counter: references must
 * never repeat, not even after a restart against the same service, because a repeated reference
 * would repeat the idempotency key and replay an old order's answer.
 */
export function newOrderReference(): string {
  return readableCode("HB-", 10);
}

export class CartBook {
  readonly #carts = new Map<string, Cart>();

  create(): Cart {
    const cart: Cart = { id: randomUUID(), reference: newOrderReference(), lines: [] };
    this.#carts.set(cart.id, cart);
    return cart;
  }

  get(id: string | undefined): Cart | undefined {
    return id === undefined ? undefined : this.#carts.get(id);
  }

  /** Adds `quantity` of a catalogue product; false for an unknown sku. */
  add(cart: Cart, sku: string, quantity: number): boolean {
    if (!findProduct(sku)) return false;
    const line = cart.lines.find((entry) => entry.sku === sku);
    if (line) line.quantity = Math.min(MAX_QUANTITY, line.quantity + quantity);
    else cart.lines.push({ sku, quantity: Math.min(MAX_QUANTITY, quantity) });
    return true;
  }

  /** Sets a line's quantity; 0 removes it. */
  setQuantity(cart: Cart, sku: string, quantity: number): void {
    if (quantity <= 0) {
      cart.lines = cart.lines.filter((entry) => entry.sku !== sku);
      return;
    }
    const line = cart.lines.find((entry) => entry.sku === sku);
    if (line) line.quantity = Math.min(MAX_QUANTITY, quantity);
  }
}

/** The cart with prices from the server's catalogue: the only prices this shop ever charges. */
export function priceCart(cart: Cart | undefined): PricedCart {
  const lines: PricedLine[] = [];
  for (const { sku, quantity } of cart?.lines ?? []) {
    const product = findProduct(sku);
    if (product) lines.push({ product, quantity, lineTotal: multiply(product.unitPrice, quantity) });
  }
  return {
    lines,
    total: sum(lines.map((line) => line.lineTotal)),
    currency: CURRENCY,
    itemCount: lines.reduce((count, line) => count + line.quantity, 0),
  };
}
