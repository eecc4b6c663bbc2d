import { expect, it } from "vitest";
import { addMonths, oneMonthFrom } from "../src/subscriptions/calendar.js";

// Renewal dates: the same day each month, the 31st becoming the month's last day.

it("renews on the same day and time of the month, clamped to the month's length", () => {
  const at = (iso: string) => addMonths(new Date(iso), 1).toISOString();
  expect(at("2026-11-25T17:10:00.000Z")).toBe("2026-12-25T17:10:00.000Z");
  expect(at("2026-12-31T08:00:00.000Z")).toBe("2027-01-31T08:00:00.000Z");
  expect(at("2027-01-31T08:00:00.000Z")).toBe("2027-02-28T08:00:00.000Z");
  expect(addMonths(new Date("2028-01-31T00:00:00.000Z"), 13).toISOString()).toBe("2029-02-28T00:00:00.000Z");
  // Counted from the start, not from the previous (clamped) date: the 31st comes back.
  expect(addMonths(new Date("2027-01-31T08:00:00.000Z"), 2).toISOString()).toBe("2027-03-31T08:00:00.000Z");
});

it("moves the demo clock to the same time next month", () => {
  const now = Date.parse("2026-02-10T12:00:00.000Z");
  expect(new Date(now + oneMonthFrom(now)).toISOString()).toBe("2026-03-10T12:00:00.000Z");
});
