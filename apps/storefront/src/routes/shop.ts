import { Router as createRouter, type Router } from "express";
import { PageError } from "../http/errors.js";
import { pageContext } from "../http/page-context.js";
import { sessionOf } from "../http/sessions.js";
import { MAX_QUANTITY, priceCart } from "../shop/carts.js";
import { findProduct } from "../shop/catalogue.js";
import { findOpenCart, openCart } from "../shop/current-cart.js";
import type { ShopContext } from "../shop-context.js";
import { renderCart } from "../views/cart.js";
import { renderCatalogue } from "../views/catalogue.js";

/** The catalogue and the cart. Forms send a sku and a quantity; prices always come from the catalogue. */
export function shopRoutes(shop: ShopContext): Router {
  const router = createRouter();

  router.get("/", async (req, res) => {
    res.type("html").send(renderCatalogue(await pageContext(req, shop)));
  });

  router.get("/cart", async (req, res) => {
    const cart = await findOpenCart(sessionOf(req), shop.carts, shop.charges);
    res.type("html").send(renderCart(await pageContext(req, shop), priceCart(cart)));
  });

  router.post("/cart/items", async (req, res) => {
    const session = sessionOf(req);
    const product = findProduct(formField(req.body, "sku"));
    if (!product) throw new PageError(404, "Product not found", "That product is not in our catalogue.");
    const quantity = parseQuantity(formField(req.body, "quantity"), 1);
    const cart = await openCart(session, shop.carts, shop.charges);
    shop.carts.add(cart, product.sku, Math.max(1, quantity));
    session.flash = { tone: "success", text: `Added ${product.name} to your cart.` };
    res.redirect(303, "/");
  });

  router.post("/cart/items/:sku", async (req, res) => {
    const session = sessionOf(req);
    const sku = String(req.params.sku);
    if (!findProduct(sku))
      throw new PageError(404, "Product not found", "That product is not in our catalogue.");
    const cart = await findOpenCart(session, shop.carts, shop.charges);
    if (cart) shop.carts.setQuantity(cart, sku, parseQuantity(formField(req.body, "quantity"), 0));
    res.redirect(303, "/cart");
  });

  return router;
}

/** A field of a url-encoded form body, or "" when absent. */
export function formField(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value : "";
}

function parseQuantity(text: string, fallback: number): number {
  if (!/^\d{1,4}$/.test(text.trim())) return fallback;
  return Math.min(MAX_QUANTITY, Number(text.trim()));
}
