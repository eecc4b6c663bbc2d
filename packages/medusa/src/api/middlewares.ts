import { authenticate, defineMiddlewares, validateAndTransformBody } from "@medusajs/framework/http";
import { attachOrderLines } from "./order-lines-middleware";
import { AttachCustomerTokenBody } from "./validators";

export default defineMiddlewares({
  routes: [
    { matcher: "/store/carts/:id/complete", methods: ["POST"], middlewares: [attachOrderLines] },
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
  ],
});
