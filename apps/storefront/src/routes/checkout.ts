import { Router as createRouter, type Router } from "express";
import { pageContext } from "../http/page-context.js";
import { sessionOf } from "../http/sessions.js";
import { priceCart } from "../shop/carts.js";
import { findOpenCart } from "../shop/current-cart.js";
import { findCustomer } from "../shop/customers.js";
import type { ShopContext } from "../shop-context.js";
import { renderCheckout } from "../views/checkout.js";

/**
 * The checkout page. Paying itself is the middleware's POST /payments/charges, called by the page's
 * script; see payments.ts for how the server decides who pays and what.
 */
export function checkoutRoutes(shop: ShopContext): Router {
  const router = createRouter();

  router.get("/checkout", async (req, res) => {
    const session = sessionOf(req);
    const customer = findCustomer(session.customerId);
    if (!customer) {
      res.redirect(303, `/sign-in?returnTo=${encodeURIComponent("/checkout")}`);
      return;
    }
    const cart = await findOpenCart(session, shop.carts, shop.charges);
    const priced = priceCart(cart);
    if (!cart || priced.lines.length === 0) {
      session.flash = { tone: "info", text: "Your cart is empty: add something before checking out." };
      res.redirect(303, "/cart");
      return;
    }
    res.type("html").send(renderCheckout(await pageContext(req, shop), customer, cart, priced));
  });

  return router;
}
