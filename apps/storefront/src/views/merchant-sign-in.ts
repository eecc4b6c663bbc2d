import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { csrfField, renderPage } from "./layout.js";

export function renderMerchantSignIn(
  context: PageContext,
  demo: { username: string; password: string },
  failed: boolean,
): string {
  const main = html`<section class="card narrow">
<h1>Merchant sign-in</h1>
<p class="notice"><strong>Demo back office.</strong> A real shop signs its staff in with its own accounts. Here anyone may use the demo merchant: user <code>${demo.username}</code>, password <code>${demo.password}</code>.</p>
${failed && html`<p class="alert alert--danger" role="alert">That user name and password do not match the demo merchant.</p>`}
<form method="post" action="/merchant/sign-in" class="stacked-form">
${csrfField(context)}
<label>User name <input name="username" autocomplete="username" value="${demo.username}" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" value="${demo.password}" required></label>
<button class="button" type="submit">Sign in</button>
</form>
</section>`;
  return renderPage({ title: "Merchant sign-in", context, main, area: "merchant" });
}
