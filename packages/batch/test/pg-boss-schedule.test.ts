import { describe, expect, it } from "vitest";
import type { BatchItemRecord } from "../src/index.js";
import { DUE_MARGIN_MS, type FollowUpPolicy, followUpDelayMs } from "../src/runners/pg-boss-schedule.js";

// When the pg-boss runner queues an item's next job (pure: no database, no clock).

const policy: FollowUpPolicy = {
  unknownRetryDelayMs: 1_000,
  maxUnknownResends: 2,
  maxUnknownResendDelayMs: 60_000,
  idempotencyWindowMs: 3_600_000,
  idempotencySafetyMarginMs: 300_000,
};
const t0 = Date.parse("2026-11-27T10:00:00Z");
const at = (ms: number) => new Date(t0 + ms);
const unknown = (nowMs: number): BatchItemRecord =>
  ({
    status: "unknown",
    firstSentAt: at(0),
    notBefore: at(nowMs + policy.unknownRetryDelayMs),
    log: [],
  }) as unknown as BatchItemRecord;

describe("followUpDelayMs", () => {
  it("waits for notBefore by the worker's clock, plus a margin, for an item not due yet", () => {
    const record = { status: "pending", notBefore: at(5_000), log: [] } as unknown as BatchItemRecord;
    expect(followUpDelayMs(record, 0, false, at(1_000), policy)).toBe(4_000 + DUE_MARGIN_MS);
    expect(followUpDelayMs(record, 7, false, at(1_000), policy)).toBe(4_000 + DUE_MARGIN_MS); // not a resend
  });

  it("resends at the engine's delay maxUnknownResends times, then at doubling delays up to the ceiling", () => {
    const delays = [1, 2, 3, 4, 5, 10].map((resends) =>
      followUpDelayMs(unknown(60_000), resends, true, at(60_000), policy),
    );
    expect(delays).toEqual([1_250, 1_250, 2_000, 4_000, 8_000, 60_000]);
  });

  it("keeps the last resend inside the key's window, then lets one run past it (core refuses: needs_review)", () => {
    const windowEnd = 3_300_000; // 1 h less the 5 min margin
    const lastChance = windowEnd - 60_000;
    expect(followUpDelayMs(unknown(lastChance - 10_000), 20, true, at(lastChance - 10_000), policy)).toBe(
      10_000,
    );
    expect(followUpDelayMs(unknown(lastChance), 21, true, at(lastChance), policy)).toBe(
      60_000 + DUE_MARGIN_MS,
    );
    expect(followUpDelayMs(unknown(windowEnd + 5), 22, true, at(windowEnd + 5), policy)).toBe(
      1_000 + DUE_MARGIN_MS,
    );
  });
});
