import type { Logger, PurchaseAuthClientOptions } from "@purchase-auth/core";
import { HttpProblem, type PurchaseAuthRouter, purchaseAuth } from "@purchase-auth/express";
import { sessionOf } from "./http/sessions.js";
import { type CartBook, priceCart } from "./shop/carts.js";
import { findCustomer } from "./shop/customers.js";
import type { OrderBook } from "./shop/orders.js";

// The payment routes, from @purchase-auth/express, mounted at /payments. This file is the part of
// the example to copy: the browser says only WHICH cart to pay (and how: capture mode, timing);
// WHO pays comes from the server-side session and WHAT is charged from the server-side cart and
// price list. The middleware refuses any other field in the request body (customerToken, amount,
// items, …) with a 400, so the browser cannot choose a token or a price, not even by accident.

/** The schedules the checkout offers for "on a schedule" (relative delays, `dd.HH:mm:ss`). */
export const SCHEDULES = {
  /** The first attempt 5 minutes after the order; one more 5 minutes later if it may succeed then. */
  "in-5-minutes": ["00.00:05:00", "00.00:05:00"],
} as const satisfies Record<string, readonly string[]>;

export type ScheduleName = keyof typeof SCHEDULES;

export const DEFAULT_SCHEDULE: ScheduleName = "in-5-minutes";

/** How far the demo clock control moves the embedded sandbox's clock: one schedule step. */
export const SCHEDULE_STEP_MS = 5 * 60_000;

export interface PaymentsOptions {
  clientOptions: PurchaseAuthClientOptions;
  /** One secret, or several while rotating. */
  webhookSecret: string | string[];
  carts: CartBook;
  orders: OrderBook;
  logger?: Logger;
}

export function createPayments({
  clientOptions,
  webhookSecret,
  carts,
  orders,
  logger,
}: PaymentsOptions): PurchaseAuthRouter {
  const payments: PurchaseAuthRouter = purchaseAuth({
    clientOptions,
    webhookSecret,

    // WHO pays: the customer signed in on this session, and the customer token stored for them on
    // the server. Nothing in the request can name another token.
    resolveCustomer: (req) => {
      const customer = findCustomer(sessionOf(req).customerId);
      return customer ? { customerId: customer.id, customerToken: customer.customerToken } : null;
    },

    // WHAT is charged: the lines of this session's cart, priced from the server's catalogue. The
    // cart id from the browser only selects a cart, and only one this session may pay for.
    buildOrder: async (req, input) => {
      const session = sessionOf(req);
      const customerId = req.purchaseAuth?.customer?.customerId;
      const cart = carts.get(input.cartId);
      const mayPay =
        cart !== undefined &&
        customerId !== undefined &&
        (cart.customerId === customerId || (cart.customerId === undefined && cart.id === session.cartId));
      if (!cart || !mayPay) {
        throw new HttpProblem({
          status: 404,
          title: "Cart not found",
          detail: "We could not find your cart.",
        });
      }
      const priced = priceCart(cart);
      if (priced.lines.length === 0) {
        throw new HttpProblem({ status: 409, title: "Empty cart", detail: "Your cart is empty." });
      }
      cart.customerId = customerId;

      // The order as charged. A charge that exists and has not failed keeps its order: a repeated
      // request (double click, retry) must not rewrite what was already charged.
      const existing = await payments.store.findByReference(cart.reference);
      if (!existing || existing.status === "failed") {
        orders.record({
          reference: cart.reference,
          cartId: cart.id,
          customerId,
          lines: priced.lines,
          total: priced.total,
          currency: priced.currency,
          captureMode: input.captureMode,
          timing: input.timing,
          ...(input.schedule === undefined ? {} : { schedule: input.schedule }),
          placedAt: new Date(),
        });
      }
      return {
        reference: cart.reference,
        currency: priced.currency,
        items: priced.lines.map(({ product, quantity }) => ({
          id: product.sku,
          description: product.name,
          unitPrice: product.unitPrice,
          quantity,
          vat: product.vat,
        })),
      };
    },

    // Capture, cancel and refund: only the demo merchant's session. (Every POST under /payments
    // has already passed the CSRF check in app.ts.)
    authorizeMerchant: (req) => sessionOf(req).merchant,

    // What the checkout lets the shopper choose. Anything else is refused by the middleware.
    captureMode: "Auto",
    allowedCaptureModes: ["Auto", "Manual"],
    timing: "now",
    allowedTimings: ["now", "asap", "scheduled"],
    schedules: SCHEDULES,
    schedule: DEFAULT_SCHEDULE,

    // Short requests to the service, so a slow service shows "confirming" instead of a hanging page.
    timeoutMs: 15_000,
    ...(logger ? { logger } : {}),
  });
  return payments;
}
