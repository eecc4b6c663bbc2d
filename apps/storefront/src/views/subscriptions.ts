import { shopperMessageFor } from "@purchase-auth/express";
import { html, type SafeHtml } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { CANCELLED_BY_CUSTOMER, type Renewal, type Subscription } from "../shop/subscriptions.js";
import { formatDateTime, formatMoney } from "./format.js";
import { csrfField, renderPage } from "./layout.js";
import { RENEWAL_COPY } from "./renewal-status.js";

export interface SubscriptionsPageOptions {
  /** Newest first. */
  subscriptions: Subscription[];
  /** The payment service's time. */
  now: Date;
  /** The shop runs on the embedded sandbox: offer the "move the clock 1 month" control. */
  demoClock: boolean;
}

/** The customer's "re-order every month" subscriptions, each with its renewals and their outcomes. */
export function renderSubscriptions(context: PageContext, options: SubscriptionsPageOptions): string {
  const { subscriptions } = options;
  const main = html`<h1>Your subscriptions</h1>
<p class="lead">Orders you re-order every month. Each renewal is charged to your saved payment method on its date.</p>
${options.demoClock && monthControl(context, options.now)}
${
  subscriptions.length === 0
    ? html`<div class="card empty-state"><p>You have no subscriptions yet. Open a paid order and choose “Re-order this every month”.</p><p><a class="button" href="/orders">Your orders</a></p></div>`
    : subscriptions.map((subscription) => subscriptionCard(context, subscription))
}`;
  return renderPage({ title: "Your subscriptions", context, main });
}

function subscriptionCard(context: PageContext, subscription: Subscription): SafeHtml {
  const active = subscription.status === "active";
  return html`<section class="card subscription stack" data-subscription-id="${subscription.id}" data-status="${subscription.status}" aria-labelledby="sub-${subscription.id}">
<h2 id="sub-${subscription.id}">${subscription.lines.map((line) => `${line.quantity} × ${line.product.name}`).join(", ")}</h2>
<p>${formatMoney(subscription.total, subscription.currency)} every month · started from order <a href="/orders/${encodeURIComponent(subscription.sourceReference)}">${subscription.sourceReference}</a></p>
${
  active
    ? html`<div class="subscription-state"><span class="badge badge--success">Active</span><span data-role="next-renewal">Next renewal: ${formatDateTime(subscription.nextRenewalAt)}</span>
<form method="post" action="/subscriptions/${encodeURIComponent(subscription.id)}/cancel" class="inline-form">${csrfField(context)}<button class="link-button" type="submit">Stop re-ordering</button></form></div>`
    : html`<p class="alert ${subscription.stoppedReason === CANCELLED_BY_CUSTOMER ? "" : "alert--danger"}" data-role="stopped" data-reason="${subscription.stoppedReason ?? ""}"><strong>Stopped${subscription.stoppedAt && html` on ${formatDateTime(subscription.stoppedAt)}`}.</strong> ${stoppedText(subscription.stoppedReason)}</p>`
}
${subscription.renewals.length > 0 && renewalTable(subscription.renewals)}
</section>`;
}

function stoppedText(reason: string | undefined): string {
  if (reason === CANCELLED_BY_CUSTOMER) return "You stopped it.";
  if (reason === "NEEDS_REVIEW") {
    return "We could not confirm whether a renewal went through. We are checking it and will contact you; nothing more is charged meanwhile.";
  }
  return `A renewal was declined: ${shopperMessageFor(reason)}`;
}

function renewalTable(renewals: Renewal[]): SafeHtml {
  return html`<table class="lines lines--compact" data-role="renewals">
<thead><tr><th scope="col">Renewal</th><th scope="col">Due</th><th scope="col">Status</th></tr></thead>
<tbody>
${[...renewals].reverse().map((renewal) => {
  const copy = RENEWAL_COPY[renewal.status];
  return html`<tr data-period="${renewal.period}" data-status="${renewal.status}" data-reason="${renewal.reason ?? ""}">
<td>${
    renewal.orderReference
      ? html`<a href="/orders/${encodeURIComponent(renewal.orderReference)}">${renewal.reference}</a>`
      : renewal.reference
  }</td>
<td>${formatDateTime(renewal.dueAt)}</td>
<td><span class="badge badge--${copy.tone}">${copy.label}</span>${renewalDetail(renewal)}</td>
</tr>`;
})}
</tbody></table>`;
}

function renewalDetail(renewal: Renewal): SafeHtml | undefined {
  if (renewal.status === "declined") {
    return html`<div class="small" data-role="shopper-message">${shopperMessageFor(renewal.reason)}</div>`;
  }
  if (renewal.status === "retrying") {
    return html`<div class="small" data-role="shopper-message">${shopperMessageFor(renewal.reason)} We will try again${renewal.nextAttemptAt && html` on ${formatDateTime(renewal.nextAttemptAt)}`}.</div>`;
  }
  const detail = RENEWAL_COPY[renewal.status].detail;
  return detail === undefined ? undefined : html`<div class="small muted">${detail}</div>`;
}

/** Demo only: renewals fall due on the sandbox's virtual clock, so the control moves it a month. */
export function monthControl(context: PageContext, now: Date, returnTo = "/subscriptions"): SafeHtml {
  return html`<aside class="demo-control" data-role="demo-clock-month">
<p><strong>Demo: move the sandbox clock 1 month.</strong> Renewals fall due on the embedded sandbox's virtual clock (now ${formatDateTime(now)}). Moving it one month runs the renewal job at once: what fell due is charged, or declined with its reason. (On a real service the job runs on the real date.)</p>
<form method="post" action="/demo/sandbox-clock/month">${csrfField(context)}<input type="hidden" name="returnTo" value="${returnTo}"><button class="button button--demo" type="submit" data-role="advance-month">Move the sandbox clock 1 month</button></form>
</aside>`;
}
