import type { ChargeRecord } from "@purchase-auth/express";
import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import type { PlacedOrder } from "../shop/orders.js";
import { statusBadge } from "./charge-status.js";
import { formatDateTime, formatMoney } from "./format.js";
import { renderPage } from "./layout.js";

export interface OrderRow {
  order: PlacedOrder;
  charge: ChargeRecord;
}

/** The signed-in customer's orders. */
export function renderOrders(context: PageContext, rows: OrderRow[]): string {
  const main = html`<h1>Your orders</h1>
${
  rows.length === 0
    ? html`<div class="card empty-state"><p>You have no orders yet.</p><p><a class="button" href="/">Browse the shop</a></p></div>`
    : html`<div class="card"><table class="lines">
<thead><tr><th scope="col">Order</th><th scope="col" class="optional">Placed</th><th scope="col" class="num">Total</th><th scope="col">Payment</th></tr></thead>
<tbody>
${rows.map(
  ({ order, charge }) => html`<tr>
<td><a href="/orders/${encodeURIComponent(order.reference)}">${order.reference}</a></td>
<td class="optional">${formatDateTime(order.placedAt)}</td>
<td class="num">${formatMoney(order.total, order.currency)}</td>
<td>${statusBadge(charge.status)}</td>
</tr>`,
)}
</tbody></table></div>`
}`;
  return renderPage({ title: "Your orders", context, main });
}
