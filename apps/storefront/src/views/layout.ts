import { html, type SafeHtml } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { LOGO } from "./product-art.js";

export const SHOP_NAME = "Harbour & Bean";

export interface PageOptions {
  title: string;
  /** Absent only when the error page cannot know the visitor (see http/errors.ts). */
  context: PageContext | undefined;
  main: SafeHtml;
  /** Module scripts under /assets. */
  scripts?: string[];
  area?: "shop" | "merchant";
}

/** The whole HTML document around a page's main content. */
export function renderPage({ title, context, main, scripts = [], area = "shop" }: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${context && html`<meta name="csrf-token" content="${context.csrfToken}">`}
<title>${title} · ${SHOP_NAME}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/styles.css">
${scripts.map((script) => html`<script type="module" src="/assets/${script}"></script>`)}
</head>
<body class="area-${area}">
${demoBanner(context)}
${area === "merchant" ? merchantHeader(context) : shopHeader(context)}
<main class="wrap">
${context?.flash && html`<p class="flash flash--${context.flash.tone}" role="status">${context.flash.text}</p>`}
${main}
</main>
<footer class="site-footer"><div class="wrap">
<p>${SHOP_NAME} is the example shop of <strong>purchase-auth</strong>: a returning company customer pays with the payment method saved at their first order.</p>
<p><a href="/">Shop</a> · <a href="/sign-in">Demo customers</a> · <a href="/merchant">Merchant back office (demo)</a></p>
</div></footer>
</body>
</html>`.value;
}

function demoBanner(context: PageContext | undefined): SafeHtml {
  const where =
    context?.paymentsMode.kind === "service"
      ? html`Payments go to the service at <code>${context.paymentsMode.url}</code>.`
      : html`Payments run on the embedded sandbox: nothing real is charged.`;
  return html`<div class="demo-banner"><div class="wrap"><strong>Demo shop</strong> · ${where}</div></div>`;
}

function shopHeader(context: PageContext | undefined): SafeHtml {
  const customer = context?.customer;
  return html`<header class="site-header"><div class="wrap header-row">
<a class="brand" href="/">${LOGO}<span class="brand-name">${SHOP_NAME}<small>Office coffee, on account</small></span></a>
<nav class="site-nav" aria-label="Main">
<a href="/">Shop</a>
${customer && html`<a href="/orders">Your orders</a> <a href="/subscriptions">Subscriptions</a>`}
<a href="/cart" class="cart-link">Cart <span class="count" data-cart-count>${context?.cartCount ?? 0}</span></a>
${
  customer
    ? html`<span class="signed-in">Signed in as <strong>${customer.name}</strong></span>
<form method="post" action="/sign-out" class="inline-form"><input type="hidden" name="_csrf" value="${context?.csrfToken}"><button class="link-button" type="submit">Sign out</button></form>`
    : html`<a class="button button--small" href="/sign-in">Sign in</a>`
}
</nav>
</div></header>`;
}

function merchantHeader(context: PageContext | undefined): SafeHtml {
  return html`<header class="site-header site-header--merchant"><div class="wrap header-row">
<a class="brand" href="/merchant">${LOGO}<span class="brand-name">${SHOP_NAME}<small>Merchant back office · demo</small></span></a>
<nav class="site-nav" aria-label="Merchant">
<a href="/merchant">Orders</a>
<a href="/merchant/subscriptions">Subscriptions</a>
<a href="/">Back to the shop</a>
${
  context?.merchant &&
  html`<form method="post" action="/merchant/sign-out" class="inline-form"><input type="hidden" name="_csrf" value="${context.csrfToken}"><button class="link-button" type="submit">Sign out</button></form>`
}
</nav>
</div></header>`;
}

/** The hidden CSRF field every form carries (see http/csrf.ts). */
export function csrfField(context: PageContext): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${context.csrfToken}">`;
}
