import type { MedusaNextFunction, MedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { ContainerRegistrationKeys, MedusaError } from "@medusajs/framework/utils";
import { isPurchaseAuthProviderId } from "../../../providers/purchase-auth/provider-ids";

// Medusa's POST /store/payment-collections/:id/payment-sessions creates a session and deletes every
// other session of the collection, calling the provider's deletePayment with each one's data. Anyone
// with the publishable key may call it: a cart's payment collection id is on the cart, which anyone
// with the cart id reads, and once the cart is completed Medusa skips its region check, so any
// provider (the system one) is accepted. Deleting this provider's session of a placed order would
// release the order's money at the service (an authorized hold cancelled, a capture refunded) or
// drop a pending (202) session, whose late success is then released as nobody's.
//
// The store route may replace this provider's sessions only while they belong to a cart that is not
// completed: the shopper choosing again, or re-initiating after a decline or an unknown outcome
// (which deletePayment settles). Anything else (a completed cart, a collection without a cart: the
// charge workflow's, an order's) is refused before Medusa touches a session. deletePayment also
// refuses to release a session Medusa recorded a live payment for (authorize-payment.ts), however
// the session is deleted.

interface CollectionForGuard {
  id: string;
  cart?: { id: string; completed_at?: string | Date | null } | null;
  payment_sessions?: Array<{ id: string; provider_id: string } | null> | null;
}

export async function refuseReplacingPlacedSessions(
  req: MedusaRequest,
  _res: MedusaResponse,
  next: MedusaNextFunction,
): Promise<void> {
  try {
    const query = req.scope.resolve(ContainerRegistrationKeys.QUERY);
    const { data } = await query.graph({
      entity: "payment_collection",
      fields: ["id", "cart.id", "cart.completed_at", "payment_sessions.id", "payment_sessions.provider_id"],
      filters: { id: req.params.id },
    });
    const collection = data[0] as CollectionForGuard | undefined;
    const ours = (collection?.payment_sessions ?? []).some((session) =>
      isPurchaseAuthProviderId(session?.provider_id),
    );
    // No such collection (Medusa's route answers that), or no session of this provider to delete.
    if (!collection || !ours) return next();

    // An open cart may hold a payment Medusa's compensation refunded without canceling it (a failed
    // completion in Auto mode): its shopper must still be able to pay again. deletePayment itself
    // refuses to release a session with a live payment, so only the cart's state decides here.
    const openCart = !!collection.cart && !collection.cart.completed_at;
    if (!openCart) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `Payment collection ${collection.id} belongs to a placed order (its cart is completed, or it has no cart): its purchase-auth payment session cannot be replaced from the store. Capture, refund or cancel the order's payment from the admin instead.`,
      );
    }
    next();
  } catch (error) {
    next(error);
  }
}
