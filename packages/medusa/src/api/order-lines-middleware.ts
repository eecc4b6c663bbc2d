import type { MedusaNextFunction, MedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import {
  type CartForOrderLines,
  ORDER_LINE_FIELDS,
  orderLinesFromCart,
} from "../providers/purchase-auth/order-lines";
import { isPurchaseAuthProviderId } from "../providers/purchase-auth/provider-ids";

/** What the lines are made of, read from the database, never from the request. */
const CART_FIELDS = [
  "id",
  // Asking for the cart's total is what makes Medusa compute the line and shipping totals too.
  "total",
  ...ORDER_LINE_FIELDS,
  "payment_collection.payment_sessions.id",
  "payment_collection.payment_sessions.provider_id",
  "payment_collection.payment_sessions.status",
  "payment_collection.payment_sessions.amount",
  "payment_collection.payment_sessions.raw_amount",
  "payment_collection.payment_sessions.currency_code",
  "payment_collection.payment_sessions.data",
];

interface SessionFields {
  id: string;
  provider_id: string;
  status: string;
  amount: unknown;
  raw_amount?: unknown;
  currency_code: string;
  data: Record<string, unknown> | null;
}

/**
 * Before a cart completes: when its payment session is this provider's, the cart's items and
 * shipping (with their VAT) are written into the session's data, server-side, for the
 * authorization to send as order lines. Any failure here only means one line for the whole amount,
 * so it never blocks the checkout.
 */
export async function attachOrderLines(
  req: MedusaRequest,
  _res: MedusaResponse,
  next: MedusaNextFunction,
): Promise<void> {
  try {
    const query = req.scope.resolve(ContainerRegistrationKeys.QUERY);
    const { data } = await query.graph({
      entity: "cart",
      fields: CART_FIELDS,
      filters: { id: req.params.id },
    });
    const cart = data[0] as
      | (CartForOrderLines & {
          id: string;
          payment_collection?: { payment_sessions?: Array<SessionFields | null> };
        })
      | undefined;
    const session = cart?.payment_collection?.payment_sessions?.find(
      (candidate) =>
        !!candidate && isPurchaseAuthProviderId(candidate.provider_id) && candidate.status === "pending",
    );
    if (cart && session) {
      await req.scope.resolve(Modules.PAYMENT).updatePaymentSession({
        id: session.id,
        amount: (session.raw_amount ?? session.amount) as number,
        currency_code: session.currency_code,
        data: { ...(session.data ?? {}), order_lines: orderLinesFromCart(cart) ?? null, cart_id: cart.id },
      });
    }
  } catch (error) {
    req.scope
      .resolve(ContainerRegistrationKeys.LOGGER)
      .warn(
        `purchase-auth: order lines of cart ${req.params.id} not attached (${(error as Error).message}); one line will be sent`,
      );
  }
  next();
}
