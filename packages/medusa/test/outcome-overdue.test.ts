import { describe, expect, it } from "vitest";
import {
  answeredReview,
  OUTCOME_OVERDUE,
  outcomeOverdueAt,
} from "../src/providers/purchase-auth/outcome-overdue";
import { readData } from "../src/providers/purchase-auth/session-data";

const HOUR = 3_600_000;
const SENT = "2026-03-01T10:00:00.000Z";
const sent = Date.parse(SENT);

function accepted(extra: Record<string, unknown>) {
  return readData({ state: "pending_authorization", ...extra });
}

describe("when an accepted session's outcome is overdue", () => {
  it("counts the grace from the last scheduled attempt (relative delays add up)", () => {
    const data = accepted({
      authorize_sent_at: SENT,
      attempt_schedule: { relative: ["00.01:00:00", "01.00:00:00"] },
    });
    expect(outcomeOverdueAt(data, new Date(sent + 5), HOUR)).toBe(sent + 25 * HOUR + HOUR);
  });

  it("counts from the session's last news when that is later", () => {
    const data = accepted({ authorize_sent_at: SENT, attempt_schedule: { preferSynchronous: true } });
    expect(outcomeOverdueAt(data, new Date(sent + 7 * HOUR), HOUR)).toBe(sent + 8 * HOUR);
  });

  it("treats a session stored before the schedule was recorded as one attempt as soon as possible", () => {
    const old = readData({ state: "pending_authorization", review_reason: null });
    expect(old).toMatchObject({ authorize_sent_at: null, attempt_schedule: null });
    expect(outcomeOverdueAt(old, new Date(sent), 86_400_000)).toBe(sent + 86_400_000);
  });

  it("ignores a stored schedule that is not one", () => {
    expect(accepted({ attempt_schedule: { relative: ["soon"] } }).attempt_schedule).toBeNull();
    expect(accepted({ attempt_schedule: "asap" }).attempt_schedule).toBeNull();
  });

  it("a webhook answers an OUTCOME_OVERDUE review only", () => {
    expect(answeredReview(accepted({ review_reason: OUTCOME_OVERDUE }))).toEqual({ review_reason: null });
    expect(answeredReview(accepted({ review_reason: "The outcome is still unknown" }))).toEqual({});
    expect(answeredReview(undefined)).toEqual({});
  });
});
