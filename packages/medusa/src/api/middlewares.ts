import { authenticate, defineMiddlewares, validateAndTransformBody } from "@medusajs/framework/http";
import { attachOrderLines } from "./order-lines-middleware";
import { requireCartOwnerForStoredToken } from "./store/carts/stored-token-guard";
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
