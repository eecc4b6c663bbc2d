import type { ChargeRecord, ChargeStatus } from "@purchase-auth/express";
import { CHARGE_STATUSES } from "@purchase-auth/express";
import { html, type SafeHtml } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { type DemoCustomer, maskedToken } from "../shop/customers.js";
import type { PlacedOrder } from "../shop/orders.js";
import type { Subscription } from "../shop/subscriptions.js";
import { statusBody } from "./charge-status.js";
import { captureModeLabel, formatDateTime, formatMoney, timingLabel } from "./format.js";
import { csrfField, renderPage } from "./layout.js";

export interface OrderPageOptions {
  order: PlacedOrder;
  charge: ChargeRecord;
  customer: DemoCustomer;
  /** The shop runs on the embedded sandbox: offer the demo clock control for a scheduled payment. */
  demoClock: boolean;
  /** Paid and not itself a renewal: offer "Re-order this every month". */
  reorderable: boolean;
  /** The subscription started from this order, or the one this order renews. */
  subscription?: Subscription;
}

/**
 * An order and its payment status. The status updates live: public/order-status.js listens to the
 * middleware's GET /payments/charges/:id/events (server-sent events, fed by webhooks) and swaps in
 * the matching <template> below, without reloading the page.
 */
export function renderOrder(context: PageContext, options: OrderPageOptions): string {
  const { order, charge, customer } = options;
  const status: ChargeStatus = charge.status;
  const pendingDetail = pendingText(order, charge);
  const showDemoClock = options.demoClock && order.timing === "scheduled";
  // A failed order's items go back into the cart (the shopper may have started another one since).
  const tryAgain = html`<form method="post" action="/orders/${encodeURIComponent(order.reference)}/try-again" data-role="try-again">${csrfField(context)}<button class="button" type="submit">Put the items back in my cart and try again</button></form>`;

  const main = html`
<p class="breadcrumbs"><a href="/orders">Your orders</a> › ${order.reference}</p>
<h1>Order <span class="reference">${order.reference}</span></h1>
<p class="muted">Placed ${formatDateTime(order.placedAt)} · ${captureModeLabel(order.captureMode)} · Payment timing: ${timingLabel(order.timing)}</p>

<section class="status-panel tone-panel" id="charge-status" aria-live="polite"
  data-status="${status}" data-capture-mode="${order.captureMode}" data-authorization-id="${charge.authorizationId ?? ""}">
<div data-role="status-body">${statusBody(status, charge, pendingDetail, tryAgain)}</div>
<p class="live-note small" data-role="live-note" hidden>Live: this page updates by itself as the payment service answers.</p>
</section>
${CHARGE_STATUSES.map(
  (each) =>
    html`<template data-status-template="${each}">${statusBody(each, undefined, pendingDetail, tryAgain)}</template>`,
)}
${showDemoClock && demoClockBox(status)}
${reorderBox(context, options)}
${!charge.authorizationId && status === "pending" && confirmingBox(order)}

<div class="order-grid">
<section class="card" aria-labelledby="items-heading">
<h2 id="items-heading">Items</h2>
<table class="lines lines--compact"><tbody>
${order.lines.map(
  (line) =>
    html`<tr><td>${line.quantity} × ${line.product.name}</td><td class="num">${formatMoney(line.lineTotal, order.currency)}</td></tr>`,
)}
</tbody><tfoot><tr><th scope="row">Total <small class="muted">incl. VAT</small></th><td class="num total">${formatMoney(order.total, order.currency)}</td></tr></tfoot></table>
</section>
<section class="card" aria-labelledby="payment-heading">
<h2 id="payment-heading">Payment</h2>
<p>Saved payment method ${maskedToken(customer.customerToken)}</p>
<p class="muted small">${customer.company}</p>
</section>
</div>
<p><a class="button button--quiet" href="/">Continue shopping</a></p>`;
  return renderPage({ title: `Order ${order.reference}`, context, main, scripts: ["order-status.js"] });
}

function pendingText(order: PlacedOrder, charge: ChargeRecord): string {
  if (!charge.authorizationId) {
    return "We are confirming your payment with the payment service. You will not be charged twice.";
  }
  if (order.timing === "scheduled") {
    return "Your payment is scheduled: the first attempt runs about 5 minutes after you ordered. This page updates by itself.";
  }
  return "We are waiting for the payment service to confirm your payment. This page updates by itself.";
}

/** A paid order can be re-ordered every month; a subscription's orders link to it. */
function reorderBox(context: PageContext, options: OrderPageOptions): SafeHtml | undefined {
  const { order, subscription } = options;
  if (subscription) {
    const text =
      order.subscriptionId === undefined
        ? "You re-order this every month."
        : "This order is a monthly renewal.";
    return html`<p class="notice" data-role="subscription-link">${text} <a href="/subscriptions">Your subscriptions</a></p>`;
  }
  if (!options.reorderable) return undefined;
  return html`<form method="post" action="/orders/${encodeURIComponent(order.reference)}/subscribe" class="reorder" data-role="reorder">${csrfField(context)}
<button class="button button--quiet" type="submit">Re-order this every month</button>
<span class="small muted">Same items, same prices, charged to your saved payment method on this day each month. Stop any time.</span></form>`;
}

/** Demo only: the sandbox's clock is virtual, so a scheduled attempt runs when the clock is moved. */
function demoClockBox(status: ChargeStatus): SafeHtml {
  return html`<aside class="demo-control" data-role="demo-clock" ${status === "pending" ? "" : html`hidden`}>
<p><strong>Demo: advance the sandbox clock.</strong> The embedded sandbox keeps time on a virtual clock, so a scheduled attempt only runs when that clock gets there. Moving it 5 minutes runs the next attempt now; its outcome arrives by webhook and this page updates. (On a real service you would simply wait.)</p>
<button class="button button--demo" type="button" data-role="advance-clock">Advance the sandbox clock 5 minutes</button>
<span class="small" data-role="advance-clock-result" role="status"></span>
</aside>`;
}

/** The create call's outcome is unknown (a timeout): the same request again learns it safely. */
function confirmingBox(order: PlacedOrder): SafeHtml {
  return html`<aside class="notice" data-role="confirming">
<p>We could not yet confirm your payment with the payment service. Checking again is safe: it never charges twice.</p>
<button class="button" type="button" data-role="check-again" data-cart-id="${order.cartId}"
  data-capture-mode="${order.captureMode}" data-timing="${order.timing}" data-schedule="${order.schedule ?? ""}">Check again</button>
<span class="small" data-role="check-again-result" role="status"></span>
</aside>`;
}
