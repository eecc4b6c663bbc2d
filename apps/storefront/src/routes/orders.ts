import { Router as createRouter, type Router } from "express";
import { PageError } from "../http/errors.js";
import { pageContext } from "../http/page-context.js";
import { sessionOf } from "../http/sessions.js";
import { findCustomer } from "../shop/customers.js";
import type { ShopContext } from "../shop-context.js";
import { renderOrder } from "../views/order.js";
import { type OrderRow, renderOrders } from "../views/orders.js";

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
    });
    res.type("html").send(page);
  });

  return router;
}
