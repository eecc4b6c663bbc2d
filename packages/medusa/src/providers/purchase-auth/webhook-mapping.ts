import { PaymentActions } from "@medusajs/framework/utils";
import type { WebhookEvent } from "@purchase-auth/core";
import { describeReason } from "./errors";
import type { PurchaseAuthData } from "./session-data";

/** What a verified webhook means for Medusa. */
export interface WebhookOutcome {
  action: PaymentActions;
  /** Medusa's payment session, from the actionReference this provider sent. */
  sessionId?: string;
  /** The authorized amount (decimal text). */
  amount?: string;
  /** What the session's payment data learns from the event (order id, failure reason). */
  update?: Partial<PurchaseAuthData>;
  /** A line for the merchant's log. */
  log?: { level: "info" | "warn"; message: string };
}

/**
 * Maps an event of the supplement (section C) to Medusa's webhook actions. authorization.succeeded
 * becomes "authorized", or "captured" for an Auto capture order; authorization.failed becomes
 * "failed" with its reason logged. Everything else is "not_supported": Medusa started those
 * captures and refunds itself, and ignores the action. Repeats and late arrivals are harmless:
 * Medusa's payment workflow does nothing for a session it already authorized or captured.
 */
export function mapWebhookEvent(event: WebhookEvent): WebhookOutcome {
  switch (event.type) {
    case "authorization.succeeded": {
      const sessionId = event.data.actionReference;
      if (!sessionId) return notOurs(event);
      const captured = event.data.captureMode === "Auto";
      return {
        action: captured ? PaymentActions.SUCCESSFUL : PaymentActions.AUTHORIZED,
        sessionId,
        amount: event.data.amount,
        update: {
          authorization_id: event.data.authorizationId,
          order_id: event.data.orderId,
          state: captured ? "captured" : "authorized",
          ...(captured ? { captured_amount: event.data.amount } : {}),
          failure_reason: null,
        },
      };
    }
    case "authorization.failed": {
      const sessionId = event.data.actionReference;
      if (!sessionId) return notOurs(event);
      return {
        action: PaymentActions.FAILED,
        sessionId,
        amount: "0",
        update: {
          authorization_id: event.data.authorizationId,
          state: "failed",
          failure_reason: event.data.reason,
        },
        log: {
          level: "warn",
          message: `purchase-auth: authorization ${event.data.authorizationId} of payment session ${sessionId} failed after attempt ${event.data.attempt} (${describeReason(event.data.reason)})`,
        },
      };
    }
    case "authorization.retrying":
      return {
        action: PaymentActions.NOT_SUPPORTED,
        log: {
          level: "info",
          message: `purchase-auth: authorization ${event.data.authorizationId} attempt ${event.data.attempt} of ${event.data.maxAttempts} failed (${describeReason(event.data.reason)}); next attempt at ${event.data.nextAttemptAt}`,
        },
      };
    default:
      return { action: PaymentActions.NOT_SUPPORTED };
  }
}

function notOurs(event: WebhookEvent): WebhookOutcome {
  return {
    action: PaymentActions.NOT_SUPPORTED,
    log: {
      level: "info",
      message: `purchase-auth: ${event.type} ${event.id} does not name a Medusa payment session; ignored`,
    },
  };
}
