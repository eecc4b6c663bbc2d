import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { DEFAULT_SCHEDULE } from "../payments.js";
import type { Cart, PricedCart } from "../shop/carts.js";
import { type DemoCustomer, maskedToken } from "../shop/customers.js";
import { formatMoney } from "./format.js";
import { renderPage, SHOP_NAME } from "./layout.js";

/**
 * The checkout. Its script (public/checkout.js) posts only the cart id and the shopper's choices to
 * the middleware's POST /payments/charges; the amount shown here is for reading, the amount charged
 * is computed again on the server.
 */
export function renderCheckout(
  context: PageContext,
  customer: DemoCustomer,
  cart: Cart,
  priced: PricedCart,
): string {
  const total = formatMoney(priced.total, priced.currency);
  const main = html`
<h1>Checkout</h1>
<div class="checkout-grid">
<section class="card" aria-labelledby="summary-heading">
<h2 id="summary-heading">Order summary</h2>
<table class="lines lines--compact">
<tbody>
${priced.lines.map(
  (line) =>
    html`<tr><td>${line.quantity} × ${line.product.name}</td><td class="num">${formatMoney(line.lineTotal, priced.currency)}</td></tr>`,
)}
</tbody>
<tfoot><tr><th scope="row">Total <small class="muted">incl. VAT</small></th><td class="num total">${total}</td></tr></tfoot>
</table>
<p class="muted small">Order reference <code>${cart.reference}</code></p>
<p><a href="/cart">Edit cart</a></p>
</section>

<section class="card" aria-labelledby="payment-heading">
<h2 id="payment-heading">Payment</h2>
<form id="checkout-form" data-cart-id="${cart.id}" data-reference="${cart.reference}" data-schedule="${DEFAULT_SCHEDULE}" novalidate>
<div class="payment-method-box">
<span class="card-chip" aria-hidden="true"></span>
<div><strong>Saved payment method ${maskedToken(customer.customerToken)}</strong>
<div class="muted small">${customer.company}, saved at your first order</div></div>
</div>
<p class="demo-note"><strong>Demo:</strong> ${customer.name}'s method is <em>${customer.tokenState.label.toLowerCase()}</em>. ${customer.tokenState.outcome}</p>

<fieldset>
<legend>When do we take the money?</legend>
<label class="choice"><input type="radio" name="captureMode" value="Auto" checked>
<span><strong>Charge now</strong><small>Auto capture: the payment is taken as soon as it is authorized.</small></span></label>
<label class="choice"><input type="radio" name="captureMode" value="Manual">
<span><strong>Reserve now, charge when shipped</strong><small>Manual capture: the amount is reserved; the merchant captures it later.</small></span></label>
</fieldset>

<fieldset>
<legend>When do you want to pay?</legend>
<label class="choice"><input type="radio" name="timing" value="now" checked>
<span><strong>Now</strong><small>You see the result here in a moment.</small></span></label>
<label class="choice"><input type="radio" name="timing" value="asap">
<span><strong>As soon as possible</strong><small>Go straight to your order; it shows when your payment went through.</small></span></label>
<label class="choice"><input type="radio" name="timing" value="scheduled">
<span><strong>In 5 minutes</strong><small>We try once in 5 minutes, and once more 5 minutes later if needed.</small></span></label>
</fieldset>

<div class="alert alert--danger" role="alert" data-role="checkout-error" hidden>
<p data-role="checkout-error-message"></p>
<p class="small" data-role="checkout-error-hint" hidden>Demo: <a href="/sign-in?returnTo=%2Fcheckout">sign in as another customer</a> to pay with a different saved payment method.</p>
</div>

<button class="button button--large" type="submit" data-role="pay-button">Pay ${total}</button>
<p class="muted small">By placing the order you let ${SHOP_NAME} charge ${total} to your saved payment method.</p>
</form>
</section>
</div>`;
  return renderPage({ title: "Checkout", context, main, scripts: ["checkout.js"] });
}
