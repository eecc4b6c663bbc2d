import type { MedusaContainer } from "@medusajs/framework/types";
import { reconcileUnknownOutcomes } from "../workflows/reconcile";

/**
 * Every 5 minutes: resolves authorizations whose outcome is unknown while the service's idempotency
 * window still allows it (one hour), and flags the rest for review; flags accepted (202)
 * authorizations whose outcome no webhook told in time (OUTCOME_OVERDUE). See workflows/reconcile.ts.
 */
export default async function purchaseAuthReconcile(container: MedusaContainer): Promise<void> {
  await reconcileUnknownOutcomes(container);
}

export const config = {
  name: "purchase-auth-reconcile",
  schedule: "*/5 * * * *",
};
