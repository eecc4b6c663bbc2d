import type { RequestHandler } from "express";
import { chargeView } from "../charges/view.js";
import { asyncHandler } from "../http/async-handler.js";
import { answerJson } from "../http/json-answer.js";
import type { RouteContext } from "./context.js";
import { ownedCharge } from "./owned-charge.js";

/** GET /charges/:authorizationId: the charge as webhooks last left it, for its customer only. */
export function statusRoute(ctx: RouteContext): RequestHandler {
  return asyncHandler(async (req, res) => {
    // Stored events of this authorization that an earlier failure left unapplied get another chance.
    const { charge } = await ctx.charges.retryWaitingEvents(await ownedCharge(req, ctx.options));
    answerJson(res, 200, chargeView(charge));
  });
}
