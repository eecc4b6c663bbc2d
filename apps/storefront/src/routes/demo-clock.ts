import { Router as createRouter, type Router } from "express";
import { SCHEDULE_STEP_MS } from "../payments.js";
import type { DemoClock } from "../shop-context.js";

/**
 * Demo only, and mounted only on the embedded sandbox: moves the sandbox's virtual clock one
 * schedule step, so a payment "on a schedule" is attempted now instead of in 5 minutes. The
 * attempt's outcome then reaches the order page the normal way: webhook → charge store → live
 * update.
 */
export function demoClockRoutes(clock: DemoClock): Router {
  const router = createRouter();
  router.post("/demo/sandbox-clock", (_req, res) => {
    clock.advance(SCHEDULE_STEP_MS);
    res.json({ advancedMs: SCHEDULE_STEP_MS });
  });
  return router;
}
