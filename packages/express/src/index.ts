// Public surface of @purchase-auth/express.

export type { WebhookEventListener, WebhookOutcome } from "./charges/charges.js";
export type { ServerChargeInput, ServerChargeResult } from "./charges/server-charge.js";
export {
  CHARGE_STATUSES,
  canMove,
  chargeStatusOfOrder,
  isCheckoutComplete,
  isForwardMove,
} from "./charges/state-machine.js";
export type { ChargeView } from "./charges/view.js";
export type {
  BuiltOrder,
  ChargeInput,
  LiveUpdateOptions,
  PurchaseAuthOptions,
  ResolvedCustomer,
  Timing,
} from "./options.js";
export {
  HttpProblem,
  type Problem,
  type ProblemFieldError,
  type ProblemHandlerOptions,
  problemFromError,
  purchaseAuthErrorHandler,
  SHOPPER_MESSAGES,
  shopperMessageFor,
} from "./problems.js";
export type { PurchaseAuthRequestContext } from "./request-context.js";
export { type PurchaseAuthRouter, purchaseAuth } from "./router.js";
export { MemoryChargeStore, type MemoryChargeStoreOptions } from "./stores/memory.js";
export {
  PostgresChargeStore,
  type PostgresChargeStoreOptions,
  type PostgresQueryable,
} from "./stores/postgres.js";
export { POSTGRES_SCHEMA_SQL } from "./stores/postgres-schema.js";
export type {
  ChargeRecord,
  ChargeStatus,
  ChargeStore,
  MerchantOperation,
  PendingCursor,
  StoredWebhookEvent,
} from "./stores/types.js";
