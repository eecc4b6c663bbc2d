import type { AttemptSchedule } from "./authorization-request.js";
import { parseTimespan, parseTimestamp } from "./common.js";

/**
 * The latest time, in epoch ms, at which the service plans the last attempt of an authorization
 * sent at `sentAt` with `schedule` (specification 2.4, supplement D): each relative delay counts
 * from the attempt before (the first from creation), an absolute schedule ends at its latest time,
 * and no schedule, an empty one or preferSynchronous is one attempt as soon as possible. An
 * authorization accepted with 202 has its outcome by then, unless every webhook about it was lost.
 */
export function lastScheduledAttemptAt(schedule: AttemptSchedule | undefined, sentAt: number): number {
  if (schedule?.relative !== undefined && schedule.relative.length > 0) {
    let at = sentAt;
    for (const delay of schedule.relative) at += parseTimespan(delay) ?? 0;
    return at;
  }
  if (schedule?.absolute !== undefined) {
    let at = sentAt;
    for (const time of schedule.absolute) at = Math.max(at, parseTimestamp(time) ?? at);
    return at;
  }
  return sentAt;
}
