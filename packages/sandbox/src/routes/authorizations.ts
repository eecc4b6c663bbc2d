import { orderTotalCents } from "@purchase-auth/core";
import type { SandboxContext } from "../context.js";
import { newGuid } from "../core/ids.js";
import { toStoredTime } from "../core/stored-time.js";
import { maxAttempts, planAttempts } from "../domain/attempt-plan.js";
import type { AuthorizationProcessor } from "../domain/authorization-processor.js";
import { authorizedResponse, errorResponse, reasonResponse, successResponse } from "../http/envelopes.js";
import type { ApiResponse } from "../http/types.js";
import { TOKEN_STATUS_REASONS } from "../state/customer-tokens.js";
import { itemsToText } from "../state/items-text.js";
import { AUTHORIZATION_WALKED_ARRAYS, parseAuthorizationRequest } from "./bounded-validation.js";
import type { ServiceCall, ServiceRoute } from "./service-route.js";
import { validationFailure } from "./validation.js";

/**
 * POST /purchase/authorizations. The pipeline has already answered 401, 415, 413, malformed JSON and
 * the idempotency cases; this checks, in order: body (400), customer token owned by the bearer's
 * merchant (404, empty errors), currency (422 INVALID_CURRENCY), token status (422), then performs
 * the attempt synchronously (200 / 422) or schedules the attempts (202).
 */
export function createAuthorizationRoute(
  ctx: SandboxContext,
  processor: AuthorizationProcessor,
): ServiceRoute {
  return {
    body: "json",
    walkedArrays: AUTHORIZATION_WALKED_ARRAYS,
    idempotent: true,
    handle: (call, now) => createAuthorization(ctx, processor, call, now),
  };
}

function createAuthorization(
  ctx: SandboxContext,
  processor: AuthorizationProcessor,
  call: ServiceCall,
  now: number,
): ApiResponse {
  const { checked, result: parsed } = parseAuthorizationRequest(call.body);
  if (!parsed.success) return validationFailure(parsed.error, checked);
  const request = parsed.data;
  const { order } = request;

  const token = ctx.customerTokens.owned(request.customerToken, call.principal.merchantId);
  if (token === undefined) return errorResponse(404);
  if (order.currency !== token.currency) return reasonResponse(422, "INVALID_CURRENCY");
  const statusReason = TOKEN_STATUS_REASONS[token.status];
  if (statusReason !== undefined) return reasonResponse(422, statusReason);

  const plan = planAttempts(request.attemptSchedule, token.needsChallenge);
  const auth = ctx.authorizations.add({
    authorizationId: newGuid(),
    merchantId: call.principal.merchantId,
    clientId: call.principal.clientId,
    customerToken: token.customerToken,
    storeId: request.storeId ?? token.storeId,
    currency: order.currency,
    totalCents: orderTotalCents(order.items) ?? 0n, // the schema has checked every item
    captureMode: order.captureMode ?? token.captureMode,
    reference: order.reference,
    actionReference: order.actionReference,
    settlementReference: order.settlementReference,
    items: itemsToText(order.items),
    idempotencyKey: call.idempotencyKey,
    plan,
    maxAttempts: maxAttempts(plan),
    createdAt: toStoredTime(now),
    status: "Scheduled",
    attempts: undefined,
    nextAttemptAt: undefined,
    orderId: undefined,
    failureReason: undefined,
  });
  ctx.stats.authorizations++;

  if (plan.kind === "synchronous") {
    const result = processor.attemptSynchronously(auth, now);
    return result.ok
      ? authorizedResponse(auth.authorizationId, result.order.orderId)
      : reasonResponse(422, result.reason);
  }
  processor.start(auth);
  return successResponse(202, { authorizationId: auth.authorizationId });
}
