import { WebhookVerificationError } from "@purchase-auth/core";
import express, { type RequestHandler } from "express";
import { asyncHandler } from "../http/async-handler.js";
import { answerJson } from "../http/json-answer.js";
import { problem } from "../problems.js";
import type { RouteContext } from "./context.js";

/**
 * POST /webhooks: verified on the raw bytes (express.raw for this route only), deduplicated by event
 * id, applied forward-only, and acknowledged (2xx) only once stored: if we crash before, the
 * service's redelivery brings it again. Unsupported event types are acknowledged and ignored; a bad
 * signature, an old timestamp or a malformed body is 400.
 */
export function webhookRoute(ctx: RouteContext): RequestHandler[] {
  const { options, charges } = ctx;
  const rawBody = express.raw({ type: () => true, limit: options.maxBodyBytes });

  const receive = asyncHandler(async (req, res) => {
    const body = rawBytesOf(req.body);
    if (body === undefined) {
      options.logger.error?.(
        "purchase-auth: the webhook body was parsed before verification; mount the purchaseAuth router before express.json()",
      );
      throw problem("internal", 500, "Internal error", "The webhook could not be verified.");
    }
    let event: ReturnType<typeof options.client.verifyWebhook>;
    try {
      event = options.client.verifyWebhook(body, req.headers, options.webhookSecrets, {
        toleranceSeconds: options.webhookToleranceSeconds,
      });
    } catch (error) {
      if (WebhookVerificationError.isInstance(error) && error.failure === "unsupported_event") {
        answerJson(res, 200, { received: true, outcome: "unsupported" });
        return;
      }
      if (WebhookVerificationError.isInstance(error)) {
        options.logger.warn?.("purchase-auth: webhook refused", { failure: error.failure });
      }
      throw error;
    }
    const outcome = await charges.receiveWebhook(event);
    answerJson(res, 200, { received: true, outcome });
  });

  return [rawBody, receive];
}

/** The raw bytes; an empty body is empty bytes; a body another parser consumed is undefined. */
function rawBytesOf(body: unknown): Buffer | undefined {
  if (Buffer.isBuffer(body)) return body;
  if (body === undefined || (typeof body === "object" && body !== null && Object.keys(body).length === 0)) {
    return Buffer.alloc(0);
  }
  return undefined;
}
