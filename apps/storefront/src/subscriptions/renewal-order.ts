import type { ChargeItem, ChargeResult } from "@purchase-auth/batch";
import type { ChargeRecord, ChargeStore } from "@purchase-auth/express";
import type { OrderBook } from "../shop/orders.js";
import type { Renewal, Subscription } from "../shop/subscriptions.js";

// From a subscription's period to a charge, and from a charge to an order of the shop.
//
// The charge of a period is a batch item whose id is the subscription id plus the period: the same
// period always makes the same item (and the batch package derives the same key for its attempt),
// so a pass run twice, or a restart in the middle, never charges a period twice.
//
// A charged renewal becomes an ordinary order: in the shop's order book and in the payment
// middleware's charge store, under the renewal's reference and the service's authorization id.
// The customer's order pages, the merchant's capture/refund and the webhooks then treat it like any
// other order: a renewal accepted for a challenge is moved on by its webhook.

/** The batch the shop's renewals are charged in (part of every renewal's idempotency key). */
export const RENEWAL_BATCH_ID = "storefront-renewals";

/** "SUB-7K3QX9M2-P01": the batch item id of one period. */
export function renewalItemId(subscriptionId: string, period: number): string {
  return `${subscriptionId}-P${String(period).padStart(2, "0")}`;
}

/** The period's order reference, sent to the service (≤ 50 characters): the same as its item id. */
export function renewalReference(subscriptionId: string, period: number): string {
  return renewalItemId(subscriptionId, period);
}

/** The charge of one period: the subscription's items at the prices they were ordered at. */
export function renewalItem(subscription: Subscription, renewal: Renewal, customerToken: string): ChargeItem {
  return {
    itemId: renewal.itemId,
    customerToken,
    order: {
      reference: renewal.reference,
      currency: subscription.currency,
      captureMode: "Auto",
      items: subscription.lines.map(({ product, quantity }) => ({
        id: product.sku,
        description: product.name,
        unitPrice: product.unitPrice,
        quantity,
        vat: product.vat,
      })),
    },
  };
}

export interface RenewalOrderDeps {
  orders: OrderBook;
  charges: ChargeStore;
}

/**
 * Records the period's order: `captured` when the service authorized it synchronously (auto
 * capture), `pending` with its authorization id when it was accepted and its outcome comes by
 * webhook. Idempotent: a second call finds the stored charge.
 */
export async function recordRenewalOrder(
  deps: RenewalOrderDeps,
  subscription: Subscription,
  renewal: Renewal,
  result: ChargeResult,
  at: Date,
): Promise<ChargeRecord> {
  const captured = result.synchronous && result.orderId !== undefined;
  if (!deps.orders.get(renewal.reference)) {
    deps.orders.record({
      reference: renewal.reference,
      cartId: `subscription:${subscription.id}`, // no cart: the subscription is what was ordered
      customerId: subscription.customerId,
      lines: subscription.lines,
      total: subscription.total,
      currency: subscription.currency,
      captureMode: "Auto",
      timing: "now",
      placedAt: at,
      subscriptionId: subscription.id,
    });
  }
  const now = new Date().toISOString();
  const { charge } = await deps.charges.create({
    reference: renewal.reference,
    customerId: subscription.customerId,
    attempt: 1,
    authorizationId: result.authorizationId,
    ...(result.orderId === undefined ? {} : { orderId: result.orderId }),
    status: captured ? "captured" : "pending",
    amount: subscription.total,
    currency: subscription.currency,
    captureMode: "Auto",
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: 1,
    createdAt: now,
    updatedAt: now,
  });
  return charge;
}
