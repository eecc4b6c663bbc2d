import type { ChargeStore } from "@purchase-auth/express";
import type { Session } from "../http/sessions.js";
import type { Cart, CartBook } from "./carts.js";

// A cart whose reference has a charge (pending, authorized, captured, …) is an order now and must not
// change any more; only a failed charge leaves it open, so the customer can try again (the middleware
// then makes a new attempt with a new idempotency key).

/** The session's cart while it is still open; undefined once it has been paid for (or never existed). */
export async function findOpenCart(
  session: Session,
  carts: CartBook,
  charges: ChargeStore,
): Promise<Cart | undefined> {
  const cart = carts.get(session.cartId);
  if (!cart) return undefined;
  const charge = await charges.findByReference(cart.reference);
  if (charge && charge.status !== "failed") {
    delete session.cartId; // paid for: the next item starts a new cart
    return undefined;
  }
  return cart;
}

/** The session's open cart, or a new one. Only for adding to the cart: viewing never creates one. */
export async function openCart(session: Session, carts: CartBook, charges: ChargeStore): Promise<Cart> {
  const cart = (await findOpenCart(session, carts, charges)) ?? carts.create();
  session.cartId = cart.id;
  return cart;
}
