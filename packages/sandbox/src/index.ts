// Public surface of @purchase-auth/sandbox: a stateful simulator of the Purchase Authorization
// Service for tests, demos and benchmarks. Test-only: the control routes have no authentication.

export type { TokenRequestRecord } from "./context.js";
export { SandboxControlError } from "./control/errors.js";
export type * from "./control/types.js";
export { DEMO, type DemoSeed, type DemoTokenName } from "./demo.js";
export { FAULT_KINDS, type FaultKind, type FaultSpec, type FaultView } from "./faults.js";
export type { ApiResponse, SandboxOutcome, SandboxRequest } from "./http/types.js";
export { DEFAULT_SCOPE, type ResolvedSandboxOptions, type SandboxOptions } from "./options.js";
export { SandboxServer, startSandbox } from "./server.js";
export { Simulator } from "./simulator.js";
export type { AttemptRecord, AuthorizationStatus } from "./state/authorizations.js";
export { IDEMPOTENCY_REPLAY_MS, IDEMPOTENCY_RETENTION_MS } from "./state/idempotency.js";
export type { OrderOperation } from "./state/orders.js";
export type {
  EmittedEvent,
  WebhookDeliveryRecord,
  WebhookDeliverySettings,
} from "./webhooks/dispatcher.js";
export { signatureHeader } from "./webhooks/signing.js";
