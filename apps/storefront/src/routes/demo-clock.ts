import { Router as createRouter, type Router } from "express";
import { sessionOf } from "../http/sessions.js";
import { SCHEDULE_STEP_MS } from "../payments.js";
import type { DemoClock } from "../shop-context.js";
import { oneMonthFrom } from "../subscriptions/calendar.js";
import type { RenewalJob, RenewalReport } from "../subscriptions/renewal-job.js";
import { formatDateTime } from "../views/format.js";
import { formField } from "./shop.js";

/** Where the "1 month" control may send the browser back to. */
const MONTH_RETURN_PATHS = new Set(["/subscriptions", "/merchant/subscriptions"]);

/**
 * Demo only, and mounted only on the embedded sandbox: moves the sandbox's virtual clock.
 * - `POST /demo/sandbox-clock`: one schedule step (5 minutes), so a payment "on a schedule" is
 *   attempted now instead of in 5 minutes. Its outcome reaches the order page the normal way:
 *   webhook → charge store → live update.
 * - `POST /demo/sandbox-clock/month` (a form): one calendar month, then a renewal pass at once,
 *   so the subscriptions that fell due are renewed (or declined) before the page comes back.
 */
export function demoClockRoutes(clock: DemoClock, renewals: RenewalJob): Router {
  const router = createRouter();
  router.post("/demo/sandbox-clock", (_req, res) => {
    clock.advance(SCHEDULE_STEP_MS);
    res.json({ advancedMs: SCHEDULE_STEP_MS });
  });

  router.post("/demo/sandbox-clock/month", async (req, res) => {
    const advancedMs = oneMonthFrom(clock.now());
    clock.advance(advancedMs);
    const report = await renewals.run();
    const returnTo = formField(req.body, "returnTo");
    sessionOf(req).flash = {
      tone: "info",
      text: `The sandbox clock moved one month, to ${formatDateTime(new Date(clock.now()))}. ${summary(report)}`,
    };
    res.redirect(303, MONTH_RETURN_PATHS.has(returnTo) ? returnTo : "/subscriptions");
  });
  return router;
}

function summary(report: RenewalReport): string {
  const parts = [
    report.charged > 0 && `${report.charged} charged`,
    report.awaiting > 0 && `${report.awaiting} awaiting confirmation`,
    report.retrying > 0 && `${report.retrying} to be retried`,
    report.declined > 0 && `${report.declined} declined`,
    report.open > 0 && `${report.open} not confirmed yet`,
  ].filter((part): part is string => typeof part === "string");
  return parts.length === 0 ? "No renewal fell due." : `Renewals: ${parts.join(", ")}.`;
}
