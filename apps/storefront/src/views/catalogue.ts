import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { MAX_QUANTITY } from "../shop/carts.js";
import { CATALOGUE, CURRENCY } from "../shop/catalogue.js";
import { formatMoney } from "./format.js";
import { csrfField, renderPage } from "./layout.js";
import { productArt } from "./product-art.js";

export function renderCatalogue(context: PageContext): string {
  const main = html`
<section class="hero">
<h1>Good coffee for the office, on your company account</h1>
<p>Order beans and kit for your team. You pay with the payment method your company saved at its first order: no card details to type.</p>
${
  !context.customer &&
  html`<p class="hero-hint">New here? <a href="/sign-in">Sign in as one of the demo customers</a>: each has a saved payment method in a different state.</p>`
}
</section>
<section aria-labelledby="products-heading">
<h2 id="products-heading" class="visually-hidden">Products</h2>
<ul class="product-grid">
${CATALOGUE.map(
  (product) => html`<li class="card product-card" data-sku="${product.sku}">
<div class="product-art-frame product-art-frame--${product.art}">${productArt(product.art)}</div>
<h3>${product.name}</h3>
<p class="muted">${product.summary}</p>
<p class="price">${formatMoney(product.unitPrice, CURRENCY)} <small>incl. ${product.vat}% VAT</small></p>
<form method="post" action="/cart/items" class="add-to-cart">
${csrfField(context)}
<input type="hidden" name="sku" value="${product.sku}">
<label class="quantity">Qty <input type="number" name="quantity" value="1" min="1" max="${MAX_QUANTITY}" inputmode="numeric"></label>
<button class="button" type="submit">Add to cart</button>
</form>
</li>`,
)}
</ul>
</section>`;
  return renderPage({ title: "Shop", context, main });
}
