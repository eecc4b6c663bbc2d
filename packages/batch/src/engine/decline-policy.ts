import type { ChargeSchedule } from "../items.js";

// How declines are handled. Reasons not worth retrying (TOKEN_REVOKED, PAYMENT_METHOD_NO_FUNDS,
// PAYMENT_DENIED, ...) end the item with that reason. PAYMENT_FAILED and SERVICE_UNAVAILABLE (core's
// `retry: "new-attempt"`) are retried as NEW attempts, each with a new key, never a reused one:
// either by this runner after the configured delays, or by the service on its own attempt schedule.

export interface DeclinePolicy {
  /**
   * Who retries a decline worth retrying:
   * - `"runner"` (default): the item is sent once synchronously (`preferSynchronous`); a decline worth
   *   retrying schedules attempt n+1, with a new key, after `retryDelaysMs[n-1]`;
   * - `"service"`: the item is sent with `attemptSchedule: { relative: serviceSchedule }`; the
   *   service retries by itself and the outcome arrives by webhook (the item ends `accepted`).
   */
  retryBy?: "runner" | "service";
  /**
   * Delays before attempts 2, 3, ... (runner mode). Default one minute, ten minutes, one hour:
   * at most 4 attempts. `[]` = never retried.
   */
  retryDelaysMs?: readonly number[];
  /** The service's relative schedule in `"service"` mode; default `["00.00:00:00", "00.01:00:00", "01.00:00:00"]`. */
  serviceSchedule?: readonly string[];
}

export interface ResolvedDeclinePolicy {
  retryBy: "runner" | "service";
  retryDelaysMs: readonly number[];
  serviceSchedule: readonly string[];
  /** The schedule sent with an item that has none of its own. */
  defaultSchedule: ChargeSchedule;
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [60_000, 600_000, 3_600_000];
export const DEFAULT_SERVICE_SCHEDULE: readonly string[] = ["00.00:00:00", "00.01:00:00", "01.00:00:00"];

export function resolveDeclinePolicy(policy: DeclinePolicy = {}): ResolvedDeclinePolicy {
  const retryBy = policy.retryBy ?? "runner";
  if (retryBy !== "runner" && retryBy !== "service") {
    throw new TypeError('declinePolicy.retryBy must be "runner" or "service"');
  }
  const retryDelaysMs = policy.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  if (!Array.isArray(retryDelaysMs) || retryDelaysMs.some((d) => !Number.isFinite(d) || d < 0)) {
    throw new TypeError("declinePolicy.retryDelaysMs must be an array of delays ≥ 0 (milliseconds)");
  }
  const serviceSchedule = policy.serviceSchedule ?? DEFAULT_SERVICE_SCHEDULE;
  return {
    retryBy,
    retryDelaysMs,
    serviceSchedule,
    defaultSchedule: retryBy === "service" ? { relative: [...serviceSchedule] } : { preferSynchronous: true },
  };
}

/** The delay before attempt `attempt + 1` after attempt `attempt` was declined, or none (give up). */
export function delayBeforeNextAttempt(policy: ResolvedDeclinePolicy, attempt: number): number | undefined {
  if (policy.retryBy !== "runner") return undefined;
  return policy.retryDelaysMs[attempt - 1];
}
