import { Router as createRouter, type Router } from "express";
import { PageError } from "../http/errors.js";
import { pageContext } from "../http/page-context.js";
import { renewSession } from "../http/sessions.js";
import { findOpenCart } from "../shop/current-cart.js";
import { findCustomer } from "../shop/customers.js";
import type { ShopContext } from "../shop-context.js";
import { renderSignIn } from "../views/sign-in.js";
import { formField } from "./shop.js";

/** Demo sign-in: pick one of the demo customers (a real shop checks a password or a login provider). */
export function accountRoutes(shop: ShopContext): Router {
  const router = createRouter();

  router.get("/sign-in", async (req, res) => {
    const returnTo = localPath(typeof req.query.returnTo === "string" ? req.query.returnTo : "");
    res.type("html").send(renderSignIn(await pageContext(req, shop), returnTo));
  });

  router.post("/sign-in", async (req, res) => {
    const customer = findCustomer(formField(req.body, "customerId"));
    if (!customer) throw new PageError(400, "Unknown customer", "Please choose one of the demo customers.");
    const session = renewSession(req, res, shop.sessions);
    const cart = await findOpenCart(session, shop.carts, shop.charges);
    if (cart?.customerId !== undefined && cart.customerId !== customer.id) {
      // The previous customer already tried to pay for this cart: its reference is theirs. The new
      // customer gets the same items under a new reference.
      const copy = shop.carts.create();
      copy.lines = cart.lines.map((line) => ({ ...line }));
      session.cartId = copy.id;
    }
    session.customerId = customer.id;
    session.flash = { tone: "success", text: `Signed in as ${customer.name}.` };
    res.redirect(303, localPath(formField(req.body, "returnTo")));
  });

  router.post("/sign-out", (req, res) => {
    const session = renewSession(req, res, shop.sessions);
    delete session.customerId;
    delete session.cartId; // the next visitor on this browser starts with an empty cart
    session.flash = { tone: "info", text: "You are signed out." };
    res.redirect(303, "/");
  });

  return router;
}

/** Only a path on this site: "/checkout", never "//evil.example" or "https://…" (no open redirect). */
export function localPath(candidate: string): string {
  return /^\/(?![/\\])[^\s]*$/.test(candidate) ? candidate : "/";
}
