import { z } from "zod";
import { guidSchema } from "./common.js";

// Response envelopes of specification sections 2.5 and 2.6.

/** One entry of `error.errors`. Unknown reasons are kept as strings (a newer service may add some). */
export const errorEntrySchema = z.looseObject({
  reason: z.string(),
  message: z.string(),
});

export const errorEnvelopeSchema = z.object({
  id: z.string(),
  error: z.object({
    code: z.number().int(),
    message: z.string(),
    errors: z.array(errorEntrySchema),
  }),
});

/** `{ id, data }` with the given data schema. */
export function successEnvelopeSchema<T extends z.ZodType>(data: T) {
  return z.object({ id: guidSchema, data });
}

export const createAuthorizationDataSchema = z.object({
  authorizationId: guidSchema,
  orderId: guidSchema.optional(),
});

export const createAuthorizationResponseSchema = successEnvelopeSchema(createAuthorizationDataSchema);

export type ErrorEntry = z.output<typeof errorEntrySchema>;
export type ErrorEnvelope = z.output<typeof errorEnvelopeSchema>;
export type CreateAuthorizationResponse = z.output<typeof createAuthorizationResponseSchema>;
