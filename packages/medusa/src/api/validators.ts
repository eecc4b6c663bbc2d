import { z } from "@medusajs/framework/zod";
import { isGuid } from "@purchase-auth/core";

/** Body of POST /admin/customers/:id/purchase-auth-tokens. */
export const AttachCustomerTokenBody = z
  .object({
    customer_token: z.string().refine(isGuid, "customer_token must be a GUID"),
    provider_id: z.string().optional(),
  })
  .strict();

export type AttachCustomerTokenBodyType = z.infer<typeof AttachCustomerTokenBody>;

/** Body of POST /admin/draft-orders/:id/purchase-auth-charge. */
export const ChargeDraftOrderBody = z
  .object({
    customer_token: z.string().refine(isGuid, "customer_token must be a GUID").optional(),
    provider_id: z.string().optional(),
    new_attempt: z.boolean().optional(),
  })
  .strict();

export type ChargeDraftOrderBodyType = z.infer<typeof ChargeDraftOrderBody>;
