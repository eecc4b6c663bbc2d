import type { BatchSummary } from "@purchase-auth/batch";
import { html, type SafeHtml } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { findCustomer } from "../shop/customers.js";
import type { Subscription } from "../shop/subscriptions.js";
import { stopExplanation } from "../subscriptions/decline-rules.js";
import { formatDateTime, formatMoney } from "./format.js";
import { renderPage } from "./layout.js";
import { RENEWAL_COPY } from "./renewal-status.js";
import { monthControl } from "./subscriptions.js";

export interface MerchantSubscriptionsOptions {
  /** Newest first. */
  subscriptions: Subscription[];
  /** @purchase-auth/batch's summary of the renewal batch. */
  summary: BatchSummary;
  now: Date;
  demoClock: boolean;
}

/** Every subscription's renewals, the declines by reason and the subscriptions that stopped, with why. */
export function renderMerchantSubscriptions(
  context: PageContext,
  options: MerchantSubscriptionsOptions,
): string {
  const { subscriptions, summary } = options;
  const stopped = subscriptions.filter((each) => each.status === "stopped");
  const renewals = subscriptions.flatMap((subscription) =>
    subscription.renewals.map((renewal) => ({ subscription, renewal })),
  );
  renewals.sort((a, b) => b.renewal.dueAt.getTime() - a.renewal.dueAt.getTime());
  const declines = { ...summary.declined.byReason };
  for (const [reason, count] of Object.entries(summary.rejected.byReason)) {
    declines[reason] = (declines[reason] ?? 0) + count;
  }

  const main = html`<h1>Subscriptions</h1>
<p class="lead">“Re-order every month”: renewals are charged by a job on the payment service's clock, through <code>@purchase-auth/batch</code>, one batch item (and one idempotency key per attempt) per subscription and period.</p>
${options.demoClock && monthControl(context, options.now, "/merchant/subscriptions")}
<div class="order-grid">
<section class="card" aria-labelledby="summary-heading" data-role="renewal-summary">
<h2 id="summary-heading">Renewals</h2>
<table class="lines lines--compact"><tbody>
<tr><th scope="row">Charged</th><td class="num" data-count="charged">${summary.charged}</td></tr>
<tr><th scope="row">Awaiting a webhook</th><td class="num" data-count="accepted">${summary.accepted}</td></tr>
<tr><th scope="row">Retry scheduled</th><td class="num" data-count="retry-scheduled">${summary.retryScheduled}</td></tr>
<tr><th scope="row">Outcome unknown (resent with the same key)</th><td class="num" data-count="unknown">${summary.unknown}</td></tr>
<tr><th scope="row">Needs review</th><td class="num" data-count="needs-review">${summary.needsReview.total}</td></tr>
<tr><th scope="row">Declined</th><td class="num" data-count="declined">${summary.declined.total + summary.rejected.total}</td></tr>
</tbody></table>
</section>
<section class="card" aria-labelledby="declines-heading" data-role="declines-by-reason">
<h2 id="declines-heading">Declines by reason</h2>
${
  Object.keys(declines).length === 0
    ? html`<p class="muted">No declined renewal.</p>`
    : html`<table class="lines lines--compact"><tbody>${Object.entries(declines).map(
        ([reason, count]) =>
          html`<tr data-reason="${reason}"><th scope="row"><code>${reason}</code></th><td class="num">${count}</td></tr>`,
      )}</tbody></table>`
}
</section>
</div>
<section class="card stack" aria-labelledby="stopped-heading" data-role="stopped-subscriptions">
<h2 id="stopped-heading">Stopped subscriptions</h2>
${
  stopped.length === 0
    ? html`<p class="muted">None.</p>`
    : html`<table class="lines"><thead><tr><th scope="col">Subscription</th><th scope="col">Customer</th><th scope="col" class="optional">Stopped</th><th scope="col">Why</th></tr></thead><tbody>${stopped.map(
        (
          subscription,
        ) => html`<tr data-subscription-id="${subscription.id}" data-reason="${subscription.stoppedReason ?? ""}">
<td>${subscription.id}</td><td>${customerName(subscription)}</td>
<td class="optional">${subscription.stoppedAt && formatDateTime(subscription.stoppedAt)}</td>
<td>${stopExplanation(subscription.stoppedReason ?? "", lastAttempts(subscription))}</td></tr>`,
      )}</tbody></table>`
}
</section>
<section class="card stack" aria-labelledby="renewals-heading">
<h2 id="renewals-heading">All renewals</h2>
${
  renewals.length === 0
    ? html`<p class="muted">No renewal has fallen due yet.</p>`
    : html`<table class="lines" data-role="merchant-renewals"><thead><tr><th scope="col">Renewal</th><th scope="col">Customer</th><th scope="col" class="optional">Due</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col" class="optional">Attempts</th></tr></thead><tbody>${renewals.map(
        ({
          subscription,
          renewal,
        }) => html`<tr data-item-id="${renewal.itemId}" data-status="${renewal.status}">
<td>${renewal.orderReference ? html`<a href="/merchant/orders/${encodeURIComponent(renewal.orderReference)}">${renewal.reference}</a>` : renewal.reference}</td>
<td>${customerName(subscription)}</td>
<td class="optional">${formatDateTime(renewal.dueAt)}</td>
<td class="num">${formatMoney(subscription.total, subscription.currency)}</td>
<td><span class="badge badge--${RENEWAL_COPY[renewal.status].tone}">${RENEWAL_COPY[renewal.status].label}</span>${renewal.reason && html` <code>${renewal.reason}</code>`}</td>
<td class="optional num">${renewal.attempts}</td></tr>`,
      )}</tbody></table>`
}
</section>`;
  return renderPage({ title: "Subscriptions · Merchant", context, main, area: "merchant" });
}

function customerName(subscription: Subscription): SafeHtml | string {
  const customer = findCustomer(subscription.customerId);
  return customer
    ? html`${customer.name}<div class="muted small optional">${customer.company}</div>`
    : subscription.customerId;
}

function lastAttempts(subscription: Subscription): number {
  return subscription.renewals.at(-1)?.attempts ?? 0;
}
