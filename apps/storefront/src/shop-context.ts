import type { PurchaseAuthClient } from "@purchase-auth/core";
import type { ChargeStore } from "@purchase-auth/express";
import type { SessionStore } from "./http/sessions.js";
import type { CartBook } from "./shop/carts.js";
import type { OrderBook } from "./shop/orders.js";
import type { SubscriptionBook } from "./shop/subscriptions.js";
import type { RenewalJob } from "./subscriptions/renewal-job.js";

/** Moves the embedded sandbox's virtual clock; present only when the shop runs on it. */
export interface DemoClock {
  advance(ms: number): void;
  /** The sandbox's virtual time, epoch milliseconds. */
  now(): number;
}

/** Where payments go, for the banner and the start-up text. */
export type PaymentsMode = { kind: "embedded-sandbox"; url: string } | { kind: "service"; url: string };

/** What the routes share: the shop's data and the middleware's store and client. */
export interface ShopContext {
  sessions: SessionStore;
  carts: CartBook;
  orders: OrderBook;
  /** The middleware's charge store: the live state of each order's payment. */
  charges: ChargeStore;
  /** The middleware's client: the merchant page reads an order's amounts from the service with it. */
  client: PurchaseAuthClient;
  paymentsMode: PaymentsMode;
  demoClock?: DemoClock;
  /** The payment service's time (epoch ms): the sandbox's virtual clock, or the real one. */
  now(): number;
  /** "Re-order every month": the customers' subscriptions and the job that renews them. */
  subscriptions: SubscriptionBook;
  renewals: RenewalJob;
}
