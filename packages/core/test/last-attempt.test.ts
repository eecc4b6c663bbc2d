import { describe, expect, it } from "vitest";
import { lastScheduledAttemptAt } from "../src/index.js";

const SENT = Date.parse("2026-11-26T10:00:00Z");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe("lastScheduledAttemptAt: when the service plans an authorization's last attempt", () => {
  it("is the send time for one attempt as soon as possible (no schedule, an empty one, preferSynchronous)", () => {
    expect(lastScheduledAttemptAt(undefined, SENT)).toBe(SENT);
    expect(lastScheduledAttemptAt({}, SENT)).toBe(SENT);
    expect(lastScheduledAttemptAt({ relative: [] }, SENT)).toBe(SENT);
    expect(lastScheduledAttemptAt({ absolute: [] }, SENT)).toBe(SENT);
    expect(lastScheduledAttemptAt({ preferSynchronous: true }, SENT)).toBe(SENT);
  });

  it("adds up relative delays: each counts from the attempt before, the first from creation", () => {
    expect(lastScheduledAttemptAt({ relative: ["00:10:00"] }, SENT)).toBe(SENT + HOUR / 6);
    expect(lastScheduledAttemptAt({ relative: ["00:00:00", "1.00:00:00", "3.12:00:00"] }, SENT)).toBe(
      SENT + DAY + 3 * DAY + 12 * HOUR,
    );
  });

  it("is the latest absolute time, whatever the order and offsets, and never before the send", () => {
    const schedule = { absolute: ["2026-11-28T09:00:00+01:00", "2026-11-27T10:00:00-05:00"] };
    expect(lastScheduledAttemptAt(schedule, SENT)).toBe(Date.parse("2026-11-28T08:00:00Z"));
    expect(lastScheduledAttemptAt({ absolute: ["2026-11-01T00:00:00+00:00"] }, SENT)).toBe(SENT);
  });
});
