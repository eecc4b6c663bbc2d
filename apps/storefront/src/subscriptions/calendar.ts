// Renewal dates: a subscription renews on the same day of the month as it started, on the payment
// service's clock (the embedded sandbox's virtual clock in the demo). In UTC; a day the month does
// not have (the 31st) becomes the month's last day.

/** `date` plus `months` calendar months, the day clamped to the target month's length. */
export function addMonths(date: Date, months: number): Date {
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const result = new Date(date.getTime());
  result.setUTCDate(1);
  result.setUTCFullYear(year, month, Math.min(date.getUTCDate(), lastDay));
  return result;
}

/** The due date of period `period` (1 = one month after the start). */
export function periodDueAt(startedAt: Date, period: number): Date {
  return addMonths(startedAt, period);
}

/** How far the demo control moves the clock for "1 month": to the same time next month. */
export function oneMonthFrom(now: number): number {
  return addMonths(new Date(now), 1).getTime() - now;
}
