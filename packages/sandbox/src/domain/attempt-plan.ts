import { type AttemptSchedule, parseTimespan, parseTimestamp } from "@purchase-auth/core";
import { clampToVirtualRange } from "../control/limits.js";

/**
 * When the attempts of an authorization run (specification 2.4, supplement D):
 * - `asap`: one asynchronous attempt as soon as possible (no schedule, an empty one,
 *   preferSynchronous false, or preferSynchronous true while the token needs a challenge);
 * - `relative`: attempt k runs `delaysMs[k-1]` after attempt k-1 (the first after creation);
 * - `absolute`: attempt k runs at `timesMs[k-1]`, or as soon as possible when that is past;
 * - `synchronous`: one attempt inside the HTTP call.
 */
export type AttemptPlan =
  | { kind: "asap" }
  | { kind: "relative"; delaysMs: readonly number[] }
  | { kind: "absolute"; timesMs: readonly number[] }
  | { kind: "synchronous" };

// Plans without data are shared: they are never changed.
const ASAP: AttemptPlan = Object.freeze({ kind: "asap" });
const SYNCHRONOUS: AttemptPlan = Object.freeze({ kind: "synchronous" });

/** The plan for a validated schedule; `needsChallenge` turns preferSynchronous into `asap`. */
export function planAttempts(schedule: AttemptSchedule | undefined, needsChallenge: boolean): AttemptPlan {
  // An empty list is an empty schedule: one attempt as soon as possible (spec 2.4).
  if (schedule?.relative !== undefined && schedule.relative.length > 0) {
    return { kind: "relative", delaysMs: schedule.relative.map((value) => parseTimespan(value) ?? 0) };
  }
  if (schedule?.absolute !== undefined && schedule.absolute.length > 0) {
    return { kind: "absolute", timesMs: schedule.absolute.map((value) => parseTimestamp(value) ?? 0) };
  }
  if (schedule?.preferSynchronous === true && !needsChallenge) return SYNCHRONOUS;
  return ASAP;
}

export function maxAttempts(plan: AttemptPlan): number {
  switch (plan.kind) {
    case "relative":
      return plan.delaysMs.length;
    case "absolute":
      return plan.timesMs.length;
    default:
      return 1;
  }
}

/**
 * Virtual due time of attempt `attempt` (1-based). `previousAt` is when the previous attempt ran, or
 * the creation time for the first; a past due time means "as soon as possible". A time beyond the
 * virtual clock's end (TimeSpan allows ~29,000 years) is that end: the attempt waits for good.
 */
export function attemptDueAt(plan: AttemptPlan, attempt: number, previousAt: number, now: number): number {
  return clampToVirtualRange(unclampedDueAt(plan, attempt, previousAt, now));
}

function unclampedDueAt(plan: AttemptPlan, attempt: number, previousAt: number, now: number): number {
  switch (plan.kind) {
    case "relative":
      return previousAt + (plan.delaysMs[attempt - 1] ?? 0);
    case "absolute":
      return Math.max(now, plan.timesMs[attempt - 1] ?? now);
    default:
      return now;
  }
}
