import { Router as createRouter, type Router } from "express";
import { PageError } from "../http/errors.js";
import { pageContext } from "../http/page-context.js";
import { sessionOf } from "../http/sessions.js";
import { findOpenCart } from "../shop/current-cart.js";
import { findCustomer } from "../shop/customers.js";
import type { Subscription } from "../shop/subscriptions.js";
import type { ShopContext } from "../shop-context.js";
import { renderOrder } from "../views/order.js";
import { type OrderRow, renderOrders } from "../views/orders.js";
import { REORDERABLE } from "./subscriptions.js";

/** The customer's orders, each with its payment's live status. */
export function orderRoutes(shop: ShopContext): Router {
  const router = createRouter();

  router.get("/orders", async (req, res) => {
    const customer = findCustomer(sessionOf(req).customerId);
    if (!customer) {
      res.redirect(303, `/sign-in?returnTo=${encodeURIComponent("/orders")}`);
      return;
    }
    const rows: OrderRow[] = [];
    for (const order of shop.orders.forCustomer(customer.id)) {
      const charge = await shop.charges.findByReference(order.reference);
      if (charge) rows.push({ order, charge });
    }
    res.type("html").send(renderOrders(await pageContext(req, shop), rows));
  });

  router.get("/orders/:reference", async (req, res) => {
    const customer = findCustomer(sessionOf(req).customerId);
    if (!customer) {
      res.redirect(303, `/sign-in?returnTo=${encodeURIComponent(req.originalUrl)}`);
      return;
    }
    const order = shop.orders.get(String(req.params.reference));
    const charge = order && (await shop.charges.findByReference(order.reference));
    // Someone else's order looks exactly like a missing one; so does a cart that was never charged.
    if (!order || !charge || order.customerId !== customer.id) {
      throw new PageError(404, "Order not found", "We could not find that order in your account.");
    }
    const page = renderOrder(await pageContext(req, shop), {
      order,
      charge,
      customer,
      demoClock: shop.demoClock !== undefined,
      reorderable: REORDERABLE.has(charge.status) && order.subscriptionId === undefined,
      ...withSubscription(
        order.subscriptionId === undefined
          ? shop.subscriptions.fromOrder(order.reference)
          : shop.subscriptions.get(order.subscriptionId),
      ),
    });
    res.type("html").send(page);
  });

  // A failed order's cart is open again: make it the session's cart, or, if the shopper has started
  // another one since, add its items there. Then back to checkout.
  router.post("/orders/:reference/try-again", async (req, res) => {
    const session = sessionOf(req);
    const customer = findCustomer(session.customerId);
    const order = shop.orders.get(String(req.params.reference));
    const charge = order && (await shop.charges.findByReference(order.reference));
    const failedCart = order && shop.carts.get(order.cartId);
    if (!customer || !order || !charge || !failedCart || order.customerId !== customer.id) {
      throw new PageError(404, "Order not found", "We could not find that order in your account.");
    }
    if (charge.status !== "failed") {
      res.redirect(303, `/orders/${encodeURIComponent(order.reference)}`);
      return;
    }
    const current = await findOpenCart(session, shop.carts, shop.charges);
    if (current && current.id !== failedCart.id) {
      for (const line of failedCart.lines) shop.carts.add(current, line.sku, line.quantity);
      failedCart.lines = []; // its items moved: the failed order cannot be paid a second way
    } else {
      session.cartId = failedCart.id;
    }
    session.flash = { tone: "success", text: "Your items are back in your cart." };
    res.redirect(303, "/checkout");
  });

  return router;
}

function withSubscription(subscription: Subscription | undefined): { subscription?: Subscription } {
  return subscription ? { subscription } : {};
}
