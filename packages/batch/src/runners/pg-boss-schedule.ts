import type { BatchItemRecord } from "../state/types.js";

// When the pg-boss runner queues an item's follow-up job. Pure: no pg-boss, no clock of its own.

/** Added to a wait for `notBefore`, so the follow-up never runs a hair too early. */
export const DUE_MARGIN_MS = 250;

export interface FollowUpPolicy {
  /** The engine's delay before resending an unknown outcome. */
  unknownRetryDelayMs: number;
  /** Resends at `unknownRetryDelayMs` before the delay starts doubling. */
  maxUnknownResends: number;
  /** The doubling delay's ceiling. */
  maxUnknownResendDelayMs: number;
  /** The client's idempotency window and safety margin (core refuses to resend a key after their difference). */
  idempotencyWindowMs: number;
  idempotencySafetyMarginMs: number;
}

/**
 * How long (ms, from the worker's `now`) before the item's follow-up job should run. A relative
 * delay, not a time: pg-boss adds it to the database's clock, so a worker whose clock is behind or
 * ahead of the database's never gets a job before the item is due by its own clock (which is what
 * `processItem` checks).
 *
 * An unknown outcome is resent at the engine's delay `maxUnknownResends` times, then at doubling
 * delays up to `maxUnknownResendDelayMs`; never later than the key's last chance (the end of its
 * window, less a slack for a job that starts late), so the last resend happens while the service
 * still answers the key. After that, one more job runs past the window's end: core refuses to send,
 * and the engine marks the item `needs_review`. The chain of jobs ends only with a final item.
 */
export function followUpDelayMs(
  after: BatchItemRecord,
  resends: number,
  resent: boolean,
  now: Date,
  policy: FollowUpPolicy,
): number {
  const wait =
    after.notBefore === undefined
      ? 0
      : Math.max(0, after.notBefore.getTime() - now.getTime() + DUE_MARGIN_MS);
  if (after.status !== "unknown" || !resent || after.firstSentAt === undefined) return wait;

  const beyond = resends - policy.maxUnknownResends;
  const growing =
    beyond > 0
      ? Math.min(policy.maxUnknownResendDelayMs, policy.unknownRetryDelayMs * 2 ** Math.min(beyond, 40))
      : 0;
  const delay = Math.max(wait, growing);

  const usable = policy.idempotencyWindowMs - policy.idempotencySafetyMarginMs;
  const windowEnd = after.firstSentAt.getTime() + usable; // core refuses to resend from here on
  const lastChance = windowEnd - Math.min(60_000, usable / 10);
  const at = now.getTime();
  if (at + delay <= lastChance) return delay;
  if (at < lastChance) return Math.max(wait, lastChance - at);
  return Math.max(wait, windowEnd - at + DUE_MARGIN_MS);
}

/** Delay before a job whose run failed for a passing reason (a database error) is tried again. */
export function failureDelayMs(failures: number): number {
  return Math.min(60_000, 1_000 * 2 ** Math.min(Math.max(0, failures - 1), 10));
}
