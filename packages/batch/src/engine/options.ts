import type { BatchStore } from "../state/types.js";
import { type DeclinePolicy, resolveDeclinePolicy } from "./decline-policy.js";
import type { ChargeClient, Engine } from "./process-item.js";

/** Options shared by every way of running charges (`runBatch`, `chargeStoredToken`, pg-boss workers). */
export interface EngineOptions {
  /** Core's `PurchaseAuthClient` (or anything with `authorizations.create`). */
  client: ChargeClient;
  /**
   * Where item state lives. `runBatch`: default a new `MemoryBatchStore` (not resumable after a
   * crash). `chargeStoredToken` requires one: its record is what a later call moves on.
   */
  store?: BatchStore;
  /** How declines are retried; see `DeclinePolicy`. */
  declinePolicy?: DeclinePolicy;
  /** A GUID namespace for the derived keys (see core's `idempotencyKeyIn`); default core's. */
  keyNamespace?: string;
  /** Delay before resending a call whose outcome is unknown (same key); default 1,000 ms. */
  unknownRetryDelayMs?: number;
  /** Delay before sending again a call that was not sent (service unreachable, 429); default 1,000 ms. */
  notSentRetryDelayMs?: number;
  /** Aborts calls in flight (their items stay unknown and are resent by a resume). */
  signal?: AbortSignal;
  /** The clock of `notBefore` and first-sent times; default the system clock. */
  now?: () => Date;
}

export function nonNegative(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`${name} must be a number ≥ 0`);
  return value;
}

export function engineOf(
  options: EngineOptions,
  store: BatchStore,
  beforeSend?: () => Promise<void>,
): Engine {
  if (typeof options?.client?.authorizations?.create !== "function") {
    throw new TypeError("client must be a PurchaseAuthClient (or have authorizations.create)");
  }
  return {
    client: options.client,
    store,
    policy: resolveDeclinePolicy(options.declinePolicy),
    keyNamespace: options.keyNamespace,
    now: options.now ?? (() => new Date()),
    unknownRetryDelayMs: nonNegative(options.unknownRetryDelayMs, 1_000, "unknownRetryDelayMs"),
    notSentRetryDelayMs: nonNegative(options.notSentRetryDelayMs, 1_000, "notSentRetryDelayMs"),
    signal: options.signal,
    ...(beforeSend === undefined ? {} : { beforeSend }),
  };
}
