import type { SubscriberArgs, SubscriberConfig } from "@medusajs/framework";
import { followCanceledOrder } from "../workflows/follow-service";

/** A canceled order releases what Medusa leaves reserved at the service (see followCanceledOrder). */
export default async function purchaseAuthOrderCanceled({
  event,
  container,
}: SubscriberArgs<{ id: string }>) {
  await followCanceledOrder(container, event.data.id);
}

export const config: SubscriberConfig = {
  event: "order.canceled",
  context: { subscriberId: "purchase-auth-order-canceled" },
};
