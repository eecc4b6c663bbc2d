import { z } from "zod";

// OAuth 2.0 client-credentials token endpoint (specification 4.2, RFC 6749 section 5).

export const tokenResponseSchema = z.object({
  token_type: z.string().refine((value) => value.toLowerCase() === "bearer", "token_type must be Bearer"),
  expires_in: z.number().int().positive(),
  ext_expires_in: z.number().int().nonnegative().optional(),
  access_token: z.string().min(1),
});

export const oauthErrorCodeSchema = z.enum([
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
]);

export const oauthErrorSchema = z.object({
  error: z.string(),
  error_description: z.string().optional(),
});

export type TokenResponse = z.output<typeof tokenResponseSchema>;
export type OAuthErrorCode = z.output<typeof oauthErrorCodeSchema>;
export type OAuthErrorBody = z.output<typeof oauthErrorSchema>;
