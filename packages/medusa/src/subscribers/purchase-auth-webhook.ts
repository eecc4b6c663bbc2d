import type { SubscriberArgs, SubscriberConfig } from "@medusajs/framework";
import type { ProviderWebhookPayload } from "@medusajs/framework/types";
import { PaymentWebhookEvents } from "@medusajs/framework/utils";
import { providerIdOfWebhook, purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import {
  followFailedAuthorization,
  followServiceOrder,
  followTokenStatus,
} from "../workflows/follow-service";

/**
 * The service's events Medusa's own webhook handling ignores: an asynchronous decline (the order
 * must not wait forever), the service's order events (order.captured, order.refunded,
 * order.cancelled incl. expiry) and customer-token.status-changed. Verified by the provider on the
 * raw body like every webhook; throwing makes the event bus retry.
 */
export default async function purchaseAuthWebhook({
  event,
  container,
}: SubscriberArgs<ProviderWebhookPayload>) {
  const providerId = providerIdOfWebhook(event.data.provider);
  if (!providerId) return;
  const verified = purchaseAuthProvider(container, providerId).verifyWebhookEvent(event.data.payload);
  if (!verified) return;
  switch (verified.type) {
    case "authorization.failed":
      if (verified.data.actionReference) {
        await followFailedAuthorization(container, verified.data.actionReference, verified.data.reason);
      }
      return;
    case "order.captured":
    case "order.refunded":
    case "order.cancelled":
      await followServiceOrder(container, verified.data.orderId);
      return;
    case "customer-token.status-changed":
      // The status is read from the service: the event's may be stale (out of order, redelivered).
      await followTokenStatus(container, verified.data.customerToken);
      return;
    default:
      return;
  }
}

export const config: SubscriberConfig = {
  event: PaymentWebhookEvents.WebhookReceived,
  context: { subscriberId: "purchase-auth-webhook" },
};
