import type { RingBuffer } from "./core/bounded.js";
import type { VirtualClock } from "./core/clock.js";
import type { Scheduler } from "./core/scheduler.js";
import type { FaultInjector } from "./faults.js";
import type { ResolvedSandboxOptions } from "./options.js";
import type { AccessTokenStore } from "./state/access-tokens.js";
import type { AttemptRecord, AuthorizationStore } from "./state/authorizations.js";
import type { CustomerTokenStore } from "./state/customer-tokens.js";
import type { IdempotencyStore } from "./state/idempotency.js";
import type { MerchantStore } from "./state/merchants.js";
import type { OrderStore } from "./state/orders.js";
import type { WebhookDispatcher } from "./webhooks/dispatcher.js";

/** One call of the token endpoint, as recorded for assertions (e.g. that a client caches its token). */
export interface TokenRequestRecord {
  /** Virtual time (ISO 8601). */
  at: string;
  /** The client id presented, if any. */
  clientId: string | undefined;
  authMethod: "basic" | "body" | "none";
  /** "issued", or the OAuth error code returned. */
  outcome: string;
  status: number;
}

/** Running totals since start or the last reset (not bounded by `historyLimit`). */
export interface SandboxStats {
  requests: number;
  tokenRequests: number;
  tokensIssued: number;
  authorizations: number;
  attempts: number;
  orders: number;
}

/** Everything the route handlers and the processor share. Stores are cleared, never replaced. */
export interface SandboxContext {
  readonly options: ResolvedSandboxOptions;
  readonly clock: VirtualClock;
  readonly scheduler: Scheduler;
  readonly merchants: MerchantStore;
  readonly accessTokens: AccessTokenStore;
  readonly customerTokens: CustomerTokenStore;
  readonly authorizations: AuthorizationStore;
  readonly orders: OrderStore;
  readonly idempotency: IdempotencyStore;
  readonly webhooks: WebhookDispatcher;
  readonly faults: FaultInjector;
  readonly attemptLog: RingBuffer<AttemptRecord>;
  readonly tokenRequestLog: RingBuffer<TokenRequestRecord>;
  readonly stats: SandboxStats;
}

export function emptyStats(): SandboxStats {
  return {
    requests: 0,
    tokenRequests: 0,
    tokensIssued: 0,
    authorizations: 0,
    attempts: 0,
    orders: 0,
  };
}
