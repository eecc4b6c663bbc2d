// @ts-check
// Capture, cancel and refund on the merchant's order page, through the middleware's merchant routes.
// Each form carries the operation's sequence number (the n-th capture or refund of this charge): sent
// twice, it has the same idempotency key, so money never moves twice.
import { postJson } from "./api.js";

const errorBox = /** @type {HTMLElement | null} */ (document.querySelector('[data-role="merchant-error"]'));

for (const form of document.querySelectorAll("form[data-merchant-action]")) {
  if (form instanceof HTMLFormElement) setUpAction(form);
}

/** @param {HTMLFormElement} form */
function setUpAction(form) {
  const operation = form.dataset.merchantAction ?? "";
  const authorizationId = form.dataset.authorizationId ?? "";
  // The n-th operation. A refused one (4xx) is recorded as refused, so a corrected try is the next
  // number; after a lost answer (5xx, network) the same number is sent again and cannot move twice.
  let sequence = Number(form.dataset.sequence);
  const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[type="submit"]'));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (errorBox) errorBox.hidden = true;
    const amount = String(new FormData(form).get("amount") ?? "").trim();
    button.disabled = true;
    const result = await postJson(`/payments/charges/${encodeURIComponent(authorizationId)}/${operation}`, {
      sequence,
      ...(amount === "" ? {} : { amount }),
    });
    if (result.ok) {
      const outcome = result.body?.operation?.outcome === "already_done" ? "already_done" : "done";
      window.location.assign(`${window.location.pathname}?done=${operation}&outcome=${outcome}`);
      return;
    }
    if (result.problem.status >= 400 && result.problem.status < 500) sequence += 1;
    if (errorBox) {
      errorBox.textContent = result.problem.detail;
      errorBox.hidden = false;
    }
    button.disabled = false;
  });
}
