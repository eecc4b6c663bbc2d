import { z } from "zod";
import { captureModeSchema } from "./authorization-request.js";
import { currencyCodeSchema, guidSchema } from "./common.js";

// Customer token resource (supplement section B).

export const customerTokenStatusSchema = z.enum([
  "Active",
  "Pending",
  "PendingActivation",
  "Denied",
  "Revoked",
  "Cancelled",
]);

export const customerTokenSchema = z.object({
  customerToken: guidSchema,
  status: customerTokenStatusSchema,
  storeId: z.string(),
  currency: currencyCodeSchema,
  captureMode: captureModeSchema,
});

export type CustomerTokenStatus = z.output<typeof customerTokenStatusSchema>;
export type CustomerToken = z.output<typeof customerTokenSchema>;
