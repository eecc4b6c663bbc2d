import type {
  AuthenticatedMedusaRequest,
  MedusaNextFunction,
  MedusaRequest,
  MedusaResponse,
} from "@medusajs/framework/http";
import type { AccountHolderDTO } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, MedusaError } from "@medusajs/framework/utils";
import { isPurchaseAuthProviderId } from "../../../providers/purchase-auth/provider-ids";
import { holdsToken, readAccountHolderData } from "../../../providers/purchase-auth/stored-tokens";

// A stored customer token is a bearer instrument: completing a cart charges it without the customer
// typing anything. Medusa lets anyone who knows a cart's id complete it, so before a cart with this
// provider's payment session completes, the caller must be the logged-in customer who owns the cart,
// and the token must be one stored for that customer. Anything else is refused before any charge.

interface CartForGuard {
  id: string;
  customer_id?: string | null;
  payment_collection?: {
    payment_sessions?: Array<{
      id: string;
      provider_id: string;
      status: string;
      data?: Record<string, unknown> | null;
    } | null>;
  } | null;
}

/** Runs after `authenticate("customer", ..., { allowUnauthenticated: true })`. */
export async function requireCartOwnerForStoredToken(
  request: MedusaRequest,
  _res: MedusaResponse,
  next: MedusaNextFunction,
): Promise<void> {
  const req = request as AuthenticatedMedusaRequest;
  try {
    const query = req.scope.resolve(ContainerRegistrationKeys.QUERY);
    const { data: carts } = await query.graph({
      entity: "cart",
      fields: [
        "id",
        "customer_id",
        "payment_collection.payment_sessions.id",
        "payment_collection.payment_sessions.provider_id",
        "payment_collection.payment_sessions.status",
        "payment_collection.payment_sessions.data",
      ],
      filters: { id: req.params.id },
    });
    const cart = carts[0] as CartForGuard | undefined;
    const sessions = (cart?.payment_collection?.payment_sessions ?? []).filter(
      (session): session is NonNullable<typeof session> =>
        !!session && isPurchaseAuthProviderId(session.provider_id),
    );
    // Not this provider's cart (or no such cart: Medusa's own route answers that).
    if (!cart || sessions.length === 0) return next();

    const actor = req.auth_context?.actor_type === "customer" ? req.auth_context.actor_id : undefined;
    if (!actor) {
      throw new MedusaError(
        MedusaError.Types.UNAUTHORIZED,
        "Paying with a stored customer token needs the customer who owns the cart to be logged in.",
      );
    }
    if (!cart.customer_id || cart.customer_id !== actor) {
      throw new MedusaError(
        MedusaError.Types.FORBIDDEN,
        "This cart belongs to another customer (or to a guest): it cannot be paid with a stored customer token by the logged-in customer.",
      );
    }
    const { data: customers } = await query.graph({
      entity: "customer",
      fields: ["id", "account_holders.*"],
      filters: { id: actor },
    });
    const holders = ((customers[0] as { account_holders?: Array<AccountHolderDTO | null> } | undefined)
      ?.account_holders ?? []) as Array<AccountHolderDTO | null>;
    for (const session of sessions) {
      // Sessions already settled (authorized, canceled, ...) charge nothing more.
      if (session.status !== "pending" && session.status !== "error") continue;
      const token = session.data?.customer_token;
      const holder = holders.find((candidate) => candidate?.provider_id === session.provider_id);
      if (typeof token !== "string" || !holder || !holdsToken(readAccountHolderData(holder.data), token)) {
        throw new MedusaError(
          MedusaError.Types.FORBIDDEN,
          "The cart's payment session charges a customer token that is not stored for the logged-in customer.",
        );
      }
    }
    next();
  } catch (error) {
    next(error);
  }
}
