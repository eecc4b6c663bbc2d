// @ts-check
// The checkout form. It sends the middleware only the cart id and the shopper's choices; the server
// decides who pays (the session) and how much (the cart and the catalogue).
import { postJson } from "./api.js";

const form = /** @type {HTMLFormElement | null} */ (document.getElementById("checkout-form"));
if (form) setUpCheckout(form);

/** @param {HTMLFormElement} form */
function setUpCheckout(form) {
  const button = /** @type {HTMLButtonElement} */ (form.querySelector('[data-role="pay-button"]'));
  const errorBox = /** @type {HTMLElement} */ (form.querySelector('[data-role="checkout-error"]'));
  const errorMessage = /** @type {HTMLElement} */ (
    form.querySelector('[data-role="checkout-error-message"]')
  );
  const errorHint = /** @type {HTMLElement} */ (form.querySelector('[data-role="checkout-error-hint"]'));
  const payLabel = button.textContent ?? "Pay";

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errorBox.hidden = true;
    button.disabled = true; // the middleware would answer a double click with the same charge anyway
    button.textContent = "Processing…";

    const data = new FormData(form);
    const timing = String(data.get("timing") ?? "now");
    const result = await postJson("/payments/charges", {
      cartId: form.dataset.cartId ?? "",
      captureMode: String(data.get("captureMode") ?? "Auto"),
      timing,
      ...(timing === "scheduled" ? { schedule: form.dataset.schedule ?? "" } : {}),
    });

    if (result.ok) {
      // Paid, authorized or still pending: the order page shows which, and follows it live.
      window.location.assign(`/orders/${encodeURIComponent(result.body.reference)}`);
      return;
    }
    if (result.problem.status === 503 && String(result.problem.type ?? "").endsWith("payment-confirming")) {
      // The outcome is not known yet: never offer "Pay" again; the order page follows the payment
      // live and finds out safely.
      const reference = form.dataset.reference ?? "";
      errorMessage.replaceChildren(
        "We are still confirming your payment. Please do not pay again. ",
        orderLink(reference),
      );
      errorHint.hidden = true;
      errorBox.hidden = false;
      button.textContent = "Confirming…";
      errorBox.scrollIntoView({ block: "nearest" });
      return;
    }
    // The problem's detail is the middleware's shopper message for the reason: show it as it is.
    errorMessage.textContent = result.problem.detail;
    errorHint.hidden = !(result.problem.status === 422 && result.problem.retryable === false);
    errorBox.hidden = false;
    button.disabled = false;
    button.textContent = payLabel;
    errorBox.scrollIntoView({ block: "nearest" });
  });
}

/** @param {string} reference */
function orderLink(reference) {
  const link = document.createElement("a");
  link.href = `/orders/${encodeURIComponent(reference)}`;
  link.dataset.role = "confirming-order-link";
  link.textContent = "Follow your order's status";
  return link;
}
