import type { ChargeRecord } from "@purchase-auth/express";
import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import type { DemoCustomer } from "../shop/customers.js";
import type { PlacedOrder } from "../shop/orders.js";
import { statusBadge } from "./charge-status.js";
import { formatDateTime, formatMoney, timingLabel } from "./format.js";
import { renderPage } from "./layout.js";

export interface MerchantOrderRow {
  order: PlacedOrder;
  charge: ChargeRecord;
  customer: DemoCustomer | undefined;
}

export function renderMerchantOrders(context: PageContext, rows: MerchantOrderRow[]): string {
  const main = html`<h1>Orders</h1>
<p class="lead">Every order placed in the shop, with its payment's status. Open an order to capture, cancel or refund it.</p>
${
  rows.length === 0
    ? html`<div class="card empty-state"><p>No orders yet. Place one in <a href="/">the shop</a>.</p></div>`
    : html`<div class="card"><table class="lines" data-role="merchant-orders">
<thead><tr><th scope="col">Order</th><th scope="col" class="optional">Placed</th><th scope="col">Customer</th><th scope="col" class="optional">Capture</th><th scope="col" class="optional">Timing</th><th scope="col" class="num">Amount</th><th scope="col">Payment</th></tr></thead>
<tbody>
${rows.map(
  ({ order, charge, customer }) => html`<tr data-reference="${order.reference}">
<td><a href="/merchant/orders/${encodeURIComponent(order.reference)}">${order.reference}</a></td>
<td class="optional">${formatDateTime(order.placedAt)}</td>
<td>${customer?.name ?? order.customerId}<div class="muted small optional">${customer?.company}</div></td>
<td class="optional">${charge.captureMode}</td>
<td class="optional">${timingLabel(order.timing)}</td>
<td class="num">${formatMoney(charge.amount, charge.currency)}</td>
<td>${statusBadge(charge.status)}</td>
</tr>`,
)}
</tbody></table></div>`
}`;
  return renderPage({ title: "Orders · Merchant", context, main, area: "merchant" });
}
