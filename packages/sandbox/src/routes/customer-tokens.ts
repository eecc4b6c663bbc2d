import type { SandboxContext } from "../context.js";
import { changeCustomerTokenStatus } from "../domain/customer-token-status.js";
import { errorResponse, successResponse } from "../http/envelopes.js";
import type { CustomerTokenRecord } from "../state/customer-tokens.js";
import type { ServiceCall, ServiceRoute } from "./service-route.js";

// Customer tokens (supplement B). A token owned by another merchant is 404, as in the specification.

export function getCustomerTokenRoute(ctx: SandboxContext): ServiceRoute {
  return {
    body: "none",
    idempotent: false,
    handle(call) {
      const token = ownedToken(ctx, call);
      if (token === undefined) return errorResponse(404);
      return successResponse(200, {
        customerToken: token.customerToken,
        status: token.status,
        storeId: token.storeId,
        currency: token.currency,
        captureMode: token.captureMode,
      });
    },
  };
}

/**
 * DELETE: the token becomes Cancelled; later authorizations get TOKEN_CANCELLED. Repeating it is a
 * no-op. A write like the order writes: it accepts Service-Idempotency-Key (core sends one).
 */
export function cancelCustomerTokenRoute(ctx: SandboxContext): ServiceRoute {
  return {
    body: "none",
    idempotent: true,
    handle(call) {
      const token = ownedToken(ctx, call);
      if (token === undefined) return errorResponse(404);
      changeCustomerTokenStatus(ctx, token, "Cancelled");
      return successResponse(202);
    },
  };
}

function ownedToken(ctx: SandboxContext, call: ServiceCall): CustomerTokenRecord | undefined {
  const customerToken = call.params.customerToken;
  return customerToken === undefined
    ? undefined
    : ctx.customerTokens.owned(customerToken, call.principal.merchantId);
}
