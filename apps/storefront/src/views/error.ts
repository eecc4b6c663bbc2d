import { html } from "../http/html.js";
import type { PageContext } from "../http/page-context.js";
import { renderPage } from "./layout.js";

export interface ErrorPageContent {
  status: number;
  title: string;
  /** Written for the visitor; never an error's own message. */
  message: string;
}

export function renderErrorPage(
  context: PageContext | undefined,
  { status, title, message }: ErrorPageContent,
): string {
  const main = html`<section class="card error-page" data-status-code="${status}">
<p class="error-code">${status}</p>
<h1>${title}</h1>
<p>${message}</p>
<p><a class="button" href="/">Back to the shop</a></p>
</section>`;
  return renderPage({ title, context, main });
}
