import type { CustomerTokenStatus } from "@purchase-auth/core";
import type { SandboxContext } from "../context.js";
import type { CustomerTokenRecord } from "../state/customer-tokens.js";

/** Changes a token's status and announces it with customer-token.status-changed (only on a change). */
export function changeCustomerTokenStatus(
  ctx: SandboxContext,
  token: CustomerTokenRecord,
  status: CustomerTokenStatus,
): void {
  const previousStatus = token.status;
  if (previousStatus === status) return;
  token.status = status;
  ctx.webhooks.emit(token.merchantId, "customer-token.status-changed", {
    customerToken: token.customerToken,
    status,
    previousStatus,
  });
}
