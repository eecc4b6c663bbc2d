import { authenticate, defineMiddlewares, validateAndTransformBody } from "@medusajs/framework/http";
import { attachOrderLines } from "./order-lines-middleware";
import { requireCartOwnerForStoredToken } from "./store/carts/stored-token-guard";
import { refuseReplacingPlacedSessions } from "./store/payment-collections/session-replace-guard";
import { AttachCustomerTokenBody, ChargeDraftOrderBody } from "./validators";

export default defineMiddlewares({
  routes: [
    {
      // The guard first: nothing (not even the order lines) is written for a caller who may not pay.
      matcher: "/store/carts/:id/complete",
      methods: ["POST"],
      middlewares: [
        authenticate("customer", ["session", "bearer"], { allowUnauthenticated: true }),
        requireCartOwnerForStoredToken,
        attachOrderLines,
      ],
    },
    {
      // Creating a session deletes the collection's others (deletePayment): never a placed order's.
      matcher: "/store/payment-collections/:id/payment-sessions",
      methods: ["POST"],
      middlewares: [refuseReplacingPlacedSessions],
    },
    {
      // Medusa already guards /store/customers/me*; said again here so the routes never depend on it.
      matcher: "/store/customers/me/purchase-auth-tokens*",
      middlewares: [authenticate("customer", ["session", "bearer"])],
    },
    {
      matcher: "/admin/customers/:id/purchase-auth-tokens",
      methods: ["POST"],
      middlewares: [validateAndTransformBody(AttachCustomerTokenBody)],
    },
    {
      matcher: "/admin/draft-orders/:id/purchase-auth-charge",
      methods: ["POST"],
      middlewares: [validateAndTransformBody(ChargeDraftOrderBody)],
    },
  ],
});
