import { isGuid } from "@purchase-auth/core";
import type { Request } from "express";
import { chargeNotFound, requireCustomer } from "../http/guards.js";
import type { ResolvedOptions } from "../options.js";
import type { ChargeRecord } from "../stores/types.js";

/**
 * The charge of `:authorizationId` if the signed-in customer owns it. Someone else's charge is a
 * 404 exactly like a missing one, so ids cannot be probed.
 */
export async function ownedCharge(req: Request, options: ResolvedOptions): Promise<ChargeRecord> {
  const customer = await requireCustomer(req, options);
  const authorizationId = String(req.params.authorizationId);
  const charge = isGuid(authorizationId)
    ? await options.store.findByAuthorizationId(authorizationId)
    : undefined;
  if (!charge || charge.customerId !== customer.customerId) throw chargeNotFound();
  return charge;
}
