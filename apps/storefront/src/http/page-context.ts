import type { Request } from "express";
import { priceCart } from "../shop/carts.js";
import { findOpenCart } from "../shop/current-cart.js";
import { type DemoCustomer, findCustomer } from "../shop/customers.js";
import type { PaymentsMode, ShopContext } from "../shop-context.js";
import { type Flash, sessionOf } from "./sessions.js";

/** What the layout shows on every page: who is signed in, the cart badge, a one-time message. */
export interface PageContext {
  customer?: DemoCustomer;
  merchant: boolean;
  cartCount: number;
  csrfToken: string;
  flash?: Flash;
  paymentsMode: PaymentsMode;
}

export type PageContextSource = Pick<ShopContext, "carts" | "charges" | "paymentsMode">;

export async function pageContext(req: Request, source: PageContextSource): Promise<PageContext> {
  const session = sessionOf(req);
  const cart = await findOpenCart(session, source.carts, source.charges);
  const flash = session.flash;
  delete session.flash; // shown once
  const customer = findCustomer(session.customerId);
  return {
    ...(customer ? { customer } : {}),
    merchant: session.merchant,
    cartCount: priceCart(cart).itemCount,
    csrfToken: session.csrfToken,
    ...(flash ? { flash } : {}),
    paymentsMode: source.paymentsMode,
  };
}
