// Public surface of @purchase-auth/core.

export * from "./config/wire-names.js";
export * from "./money/currencies.js";
export * from "./money/decimal.js";
export * from "./money/minor-units.js";
export * from "./schemas/authorization-request.js";
export * from "./schemas/common.js";
export * from "./schemas/customer-tokens.js";
export * from "./schemas/envelopes.js";
export * from "./schemas/error-reasons.js";
export * from "./schemas/oauth.js";
export * from "./schemas/orders.js";
export * from "./schemas/webhook-events.js";
export * from "./validation/issues.js";
