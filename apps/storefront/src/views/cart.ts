import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { MAX_QUANTITY, type PricedCart } from "../shop/carts.js";
import { formatMoney } from "./format.js";
import { csrfField, renderPage } from "./layout.js";

export function renderCart(context: PageContext, cart: PricedCart): string {
  const main =
    cart.lines.length === 0
      ? html`<h1>Your cart</h1>
<div class="card empty-state"><p>Your cart is empty.</p><p><a class="button" href="/">Browse the shop</a></p></div>`
      : html`<h1>Your cart</h1>
<div class="card">
<table class="lines">
<thead><tr><th scope="col">Product</th><th scope="col" class="num optional">Price</th><th scope="col">Quantity</th><th scope="col" class="num">Total</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
<tbody>
${cart.lines.map(
  (line) => html`<tr data-sku="${line.product.sku}">
<td>${line.product.name}</td>
<td class="num optional">${formatMoney(line.product.unitPrice, cart.currency)}</td>
<td><form method="post" action="/cart/items/${encodeURIComponent(line.product.sku)}" class="inline-form quantity-form">
${csrfField(context)}
<label class="visually-hidden" for="qty-${line.product.sku}">Quantity of ${line.product.name}</label>
<input id="qty-${line.product.sku}" type="number" name="quantity" value="${line.quantity}" min="0" max="${MAX_QUANTITY}" inputmode="numeric">
<button class="button button--small button--quiet" type="submit">Update</button>
</form></td>
<td class="num">${formatMoney(line.lineTotal, cart.currency)}</td>
<td><form method="post" action="/cart/items/${encodeURIComponent(line.product.sku)}" class="inline-form">
${csrfField(context)}<input type="hidden" name="quantity" value="0">
<button class="link-button" type="submit">Remove</button>
</form></td>
</tr>`,
)}
</tbody>
<tfoot><tr><th scope="row">Total <small class="muted">incl. VAT</small></th><td class="optional"></td><td></td><td class="num total" data-cart-total>${formatMoney(cart.total, cart.currency)}</td><td></td></tr></tfoot>
</table>
<div class="actions">
<a class="button button--quiet" href="/">Continue shopping</a>
<a class="button" href="/checkout">Checkout</a>
</div>
</div>`;
  return renderPage({ title: "Cart", context, main });
}
