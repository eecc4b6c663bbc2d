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
// completed, on a collection with no live payment: the shopper choosing again, or re-initiating after
// a decline or an unknown outcome (which deletePayment settles). Anything else (a completed cart, a
// paid collection, a collection without a cart: the charge workflow's, an order's) is refused before
// Medusa touches a session. deletePayment also refuses to release a session Medusa recorded a payment
// for (authorize-payment.ts), should a session be deleted some other way.

interface CollectionForGuard {
  id: string;
  cart?: { id: string; completed_at?: string | Date | null } | null;
  payment_sessions?: Array<{ id: string; provider_id: string } | null> | null;
  payments?: Array<{ id: string; canceled_at?: string | Date | null } | null> | null;
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
      fields: [
        "id",
        "cart.id",
        "cart.completed_at",
        "payment_sessions.id",
        "payment_sessions.provider_id",
        "payments.id",
        "payments.canceled_at",
      ],
      filters: { id: req.params.id },
    });
    const collection = data[0] as CollectionForGuard | undefined;
    const ours = (collection?.payment_sessions ?? []).some((session) =>
      isPurchaseAuthProviderId(session?.provider_id),
    );
    // No such collection (Medusa's route answers that), or no session of this provider to delete.
    if (!collection || !ours) return next();

    const livePayment = (collection.payments ?? []).some((payment) => payment && !payment.canceled_at);
    const openCart = !!collection.cart && !collection.cart.completed_at;
    if (livePayment || !openCart) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `Payment collection ${collection.id} belongs to a placed order (its cart is completed, it is paid, or it has no cart): its purchase-auth payment session cannot be replaced from the store. Capture, refund or cancel the order's payment from the admin instead.`,
      );
    }
    next();
  } catch (error) {
    next(error);
  }
}
