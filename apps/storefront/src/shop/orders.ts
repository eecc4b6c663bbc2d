import type { CaptureMode } from "@purchase-auth/core";
import type { Timing } from "@purchase-auth/express";
import type { PricedLine } from "./carts.js";

// The shop's own order book: what was charged, for whom, and how. The charge's live state (pending,
// authorized, captured, …) lives in the middleware's charge store, under the same reference; pages
// join the two.

export interface PlacedOrder {
  reference: string;
  cartId: string;
  customerId: string;
  lines: PricedLine[];
  total: string;
  currency: string;
  captureMode: CaptureMode;
  timing: Timing;
  schedule?: string;
  placedAt: Date;
  /** A monthly renewal: the subscription it renews (see subscriptions.ts). */
  subscriptionId?: string;
}

export class OrderBook {
  readonly #orders = new Map<string, PlacedOrder>();

  /** Records (or, for a new attempt after a failed payment, replaces) the order of a reference. */
  record(order: PlacedOrder): void {
    this.#orders.set(order.reference, order);
  }

  get(reference: string): PlacedOrder | undefined {
    return this.#orders.get(reference);
  }

  /** Newest first. */
  all(): PlacedOrder[] {
    return [...this.#orders.values()].sort((a, b) => b.placedAt.getTime() - a.placedAt.getTime());
  }

  forCustomer(customerId: string): PlacedOrder[] {
    return this.all().filter((order) => order.customerId === customerId);
  }
}
