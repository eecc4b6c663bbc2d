import type { Order } from "@purchase-auth/core";
import type { ChargeRecord, MerchantOperation } from "@purchase-auth/express";
import { html, type SafeHtml } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import type { DemoCustomer } from "../shop/customers.js";
import { isPositive, subtract } from "../shop/money.js";
import type { PlacedOrder } from "../shop/orders.js";
import { statusBadge } from "./charge-status.js";
import { formatDateTime, formatMoney, timingLabel } from "./format.js";
import { renderPage } from "./layout.js";

export interface MerchantOrderOptions {
  order: PlacedOrder;
  charge: ChargeRecord;
  customer: DemoCustomer | undefined;
  /** The order as the service has it (its amounts are the truth); undefined when it could not be read. */
  serviceOrder: Order | undefined;
  /** The operation just completed, from the redirect after it. */
  done?: { operation: MerchantOperation; outcome: string };
}

const DONE_TEXT: Record<MerchantOperation, string> = {
  capture: "Captured.",
  cancel: "The uncaptured amount was released.",
  refund: "Refunded.",
};

/** The service's order status in the back office's words (its codes are for machines). */
const SERVICE_ORDER_STATUS: Record<Order["status"], string> = {
  NotActivated: "Reserved, nothing captured yet",
  PartActivated: "Partly captured",
  Activated: "Fully captured",
  PartReturned: "Partly refunded",
  Returned: "Fully refunded",
  Cancelled: "Released",
  Expired: "Expired before capture",
};

/**
 * One order with capture, cancel and refund. The forms post to the middleware's merchant routes
 * (public/merchant.js) with a `sequence`: the n-th capture (or refund) of this charge. A form sent
 * twice (a double click, a retry after a lost answer) carries the same sequence, hence the same
 * idempotency key, so it can never capture or refund twice.
 */
export function renderMerchantOrder(context: PageContext, options: MerchantOrderOptions): string {
  const { order, charge, customer, serviceOrder, done } = options;
  const currency = charge.currency;
  const money = (amount: string) => formatMoney(amount, currency);

  const main = html`<p class="breadcrumbs"><a href="/merchant">Orders</a> › ${order.reference}</p>
<h1>Order <span class="reference">${order.reference}</span> ${statusBadge(charge.status)}</h1>
<p class="muted">Placed ${formatDateTime(order.placedAt)} by ${customer?.name ?? order.customerId}${customer && html` (${customer.company})`} · ${charge.captureMode} capture · ${timingLabel(order.timing)}</p>
${
  done &&
  html`<p class="flash flash--success" role="status" data-role="operation-done">${
    done.outcome === "already_done" ? "Already done: nothing changed." : DONE_TEXT[done.operation]
  }</p>`
}
<div class="order-grid">
<section class="card" aria-labelledby="amounts-heading">
<h2 id="amounts-heading">Amounts</h2>
${
  serviceOrder
    ? html`<dl class="amounts" data-role="amounts">
<dt>Authorized</dt><dd>${money(serviceOrder.totalAmount)}</dd>
<dt>Captured</dt><dd data-role="captured-amount">${money(serviceOrder.capturedAmount)}</dd>
<dt>Refunded</dt><dd data-role="refunded-amount">${money(serviceOrder.refundedAmount)}</dd>
<dt>Released</dt><dd>${money(serviceOrder.cancelledAmount)}</dd>
<dt>At the payment service</dt><dd data-role="service-status">${SERVICE_ORDER_STATUS[serviceOrder.status]}</dd>
</dl>`
    : charge.orderId
      ? html`<p class="alert alert--danger">The order's amounts could not be read from the payment service right now. Reload to try again.</p>`
      : html`<dl class="amounts"><dt>Amount</dt><dd>${money(charge.amount)}</dd></dl>`
}
<table class="lines lines--compact"><tbody>
${order.lines.map(
  (line) =>
    html`<tr><td>${line.quantity} × ${line.product.name}</td><td class="num">${money(line.lineTotal)}</td></tr>`,
)}
</tbody></table>
</section>
<section class="card" aria-labelledby="actions-heading">
<h2 id="actions-heading">Payment actions</h2>
${actions(charge, serviceOrder, money)}
<div class="alert alert--danger" role="alert" data-role="merchant-error" hidden></div>
</section>
</div>`;
  return renderPage({
    title: `Order ${order.reference} · Merchant`,
    context,
    main,
    area: "merchant",
    scripts: ["merchant.js"],
  });
}

function actions(
  charge: ChargeRecord,
  order: Order | undefined,
  money: (amount: string) => string,
): SafeHtml {
  if (!charge.orderId || !charge.authorizationId) {
    return html`<p class="muted">Nothing to do yet: the payment is ${charge.status === "failed" ? "failed" : "not authorized yet"}.</p>`;
  }
  // The service's amounts decide what is left; without them, the charge's status is the guide.
  const capturable = order
    ? ["NotActivated", "PartActivated"].includes(order.status)
      ? subtract(subtract(order.totalAmount, order.capturedAmount), order.cancelledAmount)
      : "0.00"
    : undefined;
  const refundable = order ? subtract(order.capturedAmount, order.refundedAmount) : undefined;
  const canCapture = capturable
    ? isPositive(capturable)
    : ["authorized", "partially_captured"].includes(charge.status);
  const canRefund = refundable
    ? isPositive(refundable)
    : ["captured", "partially_captured", "partially_refunded"].includes(charge.status);

  const form = (operation: MerchantOperation, body: SafeHtml) =>
    html`<form class="merchant-action" data-merchant-action="${operation}" data-authorization-id="${charge.authorizationId}" data-sequence="${charge.operations[operation] + 1}" novalidate>${body}</form>`;

  const parts: SafeHtml[] = [];
  if (canCapture) {
    parts.push(
      form(
        "capture",
        html`<h3>Capture</h3>
<label>Amount <input name="amount" inputmode="decimal" autocomplete="off" placeholder="${capturable ?? ""}" pattern="\\d+(\\.\\d{1,2})?"></label>
<p class="muted small">Leave empty to capture everything still reserved${capturable ? html` (${money(capturable)})` : ""}; enter less for a partial capture.</p>
<button class="button" type="submit">Capture</button>`,
      ),
      form(
        "cancel",
        html`<h3>Cancel</h3>
<p class="muted small">Releases what is still reserved${capturable ? html` (${money(capturable)})` : ""}. What was captured stays captured.</p>
<button class="button button--danger" type="submit">Cancel the uncaptured amount</button>`,
      ),
    );
  }
  if (canRefund) {
    parts.push(
      form(
        "refund",
        html`<h3>Refund</h3>
<label>Amount <input name="amount" inputmode="decimal" autocomplete="off" placeholder="${refundable ?? ""}" required pattern="\\d+(\\.\\d{1,2})?"></label>
<p class="muted small">Enter the amount to refund, up to ${refundable ? money(refundable) : "the captured amount"}.</p>
<button class="button" type="submit">Refund</button>`,
      ),
    );
  }
  if (parts.length === 0) return html`<p class="muted">Nothing left to capture or refund.</p>`;
  return html`${parts}`;
}
