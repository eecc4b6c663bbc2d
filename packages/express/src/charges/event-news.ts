import type { WebhookEvent } from "@purchase-auth/core";
import type { ChargeNews } from "./state-machine.js";

// What a webhook event tells about its charge, in the state machine's terms.

/** The authorization an event is about, as the service wrote it. */
export function authorizationIdOf(event: WebhookEvent): string | undefined {
  return "authorizationId" in event.data ? event.data.authorizationId : undefined;
}

/** What an event tells about its charge; undefined for events about no charge. */
export function newsOf(event: WebhookEvent): ChargeNews | undefined {
  switch (event.type) {
    case "authorization.succeeded":
      // Specification 4.1 rule 4 (supplement A): with Auto the order is captured (Activated) as
      // soon as the authorization succeeds, as the synchronous 200 path reads it: `order.captured`
      // follows, but a charge must not wait for it (lost, it would stay `authorized` for ever).
      // The event's own capture mode decides: one that is not the charge's is another order's.
      return {
        kind: "authorized",
        authorizationId: event.data.authorizationId,
        orderId: event.data.orderId,
        captured: event.data.captureMode === "Auto",
        authorized: {
          customerToken: event.data.customerToken,
          currency: event.data.currency,
          captureMode: event.data.captureMode,
        },
      };
    case "authorization.retrying":
      return { kind: "retrying", authorizationId: event.data.authorizationId, reason: event.data.reason };
    case "authorization.failed":
      return { kind: "failed", authorizationId: event.data.authorizationId, reason: event.data.reason };
    case "order.captured":
    case "order.refunded":
    case "order.cancelled":
      return {
        kind: "order",
        authorizationId: event.data.authorizationId,
        orderId: event.data.orderId,
        orderStatus: event.data.status,
      };
    case "customer-token.status-changed":
      return undefined;
  }
}
