import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { DEMO_CUSTOMERS, maskedToken } from "../shop/customers.js";
import { csrfField, renderPage } from "./layout.js";

/** The demo customer picker: each card says what that customer's saved payment method will do. */
export function renderSignIn(context: PageContext, returnTo: string): string {
  const onService = context.paymentsMode.kind === "service";
  const main = html`
<h1>Sign in</h1>
<p class="lead">This is a demo: pick a customer. Each one has a saved payment method (a stored customer token) in a different state, so you can see what your shop shows in each case.</p>
${
  onService &&
  html`<p class="notice">These customers hold the sandbox's demo customer tokens. The outcomes below apply when the configured service is a sandbox with its demo data.</p>`
}
<ul class="customer-grid">
${DEMO_CUSTOMERS.map(
  (
    customer,
  ) => html`<li class="card customer-card${context.customer?.id === customer.id ? " is-current" : ""}" data-customer="${customer.id}">
<div class="customer-head"><h2>${customer.name}</h2><span class="badge badge--token-${customer.tokenState.tone}">${customer.tokenState.label}</span></div>
<p class="muted">${customer.company} · ${customer.email}</p>
<p class="payment-method">Saved payment method ${maskedToken(customer.customerToken)}</p>
<p class="outcome"><strong>What happens:</strong> ${customer.tokenState.outcome}</p>
<form method="post" action="/sign-in">
${csrfField(context)}
<input type="hidden" name="returnTo" value="${returnTo}">
<button class="button" type="submit" name="customerId" value="${customer.id}">Sign in as ${customer.name}</button>
</form>
</li>`,
)}
</ul>`;
  return renderPage({ title: "Sign in", context, main });
}
