// Public surface of @purchase-auth/core.

export { PurchaseAuthClient } from "./client.js";
export type { Logger, PurchaseAuthClientOptions } from "./config/options.js";
export * from "./config/wire-names.js";
export * from "./errors/errors.js";
export {
  DEFAULT_IDEMPOTENCY_NAMESPACE,
  idempotencyKeyFor,
  idempotencyKeyIn,
  newIdempotencyKey,
} from "./idempotency/keys.js";
export * from "./money/currencies.js";
export * from "./money/decimal.js";
export * from "./money/minor-units.js";
export type { CreateAuthorizationResult } from "./resources/authorizations.js";
export type { CancelInput, CaptureInput, OrderWriteResult, RefundInput } from "./resources/orders.js";
export type { RequestOptions, WriteOptions } from "./resources/request-options.js";
export type { ResendOptions, ResendResult } from "./resources/unknown-writes.js";
export * from "./schemas/authorization-request.js";
export * from "./schemas/common.js";
export * from "./schemas/customer-tokens.js";
export * from "./schemas/envelopes.js";
export * from "./schemas/error-reasons.js";
export { lastScheduledAttemptAt } from "./schemas/last-attempt.js";
export * from "./schemas/oauth.js";
export * from "./schemas/orders.js";
export * from "./schemas/webhook-events.js";
export * from "./validation/authorization-input.js";
export { safeParseFast } from "./validation/compiled-parser.js";
export * from "./validation/issues.js";
export { type SignedWebhook, type SignWebhookOptions, signWebhook } from "./webhooks/sign.js";
export { computeSignature as computeWebhookSignature } from "./webhooks/signature.js";
export { type VerifyWebhookOptions, verifyWebhook, type WebhookHeaders } from "./webhooks/verify.js";
