// @ts-check
// Live payment status on the order page. The middleware's GET /payments/charges/:id/events sends
// the charge's state at once and again whenever a webhook changes it; each state swaps in the
// server-rendered <template> for that status. No reload, no polling.
import { postJson } from "./api.js";

const panel = document.getElementById("charge-status");
if (panel) {
  followCharge(panel);
  setUpDemoClock();
  setUpCheckAgain();
}

/**
 * @typedef {object} Charge The middleware's charge view.
 * @property {string} status
 * @property {string} captureMode
 * @property {string} [message] For a failed charge: the shopper message of its reason.
 */

/**
 * Checkout is complete once nothing more will happen by itself: failed, or captured (auto capture),
 * or authorized (manual capture), or anything later. The middleware then ends the stream, and the
 * EventSource must be closed here or it would reconnect.
 * @param {string} status
 * @param {string} captureMode
 */
function isCheckoutComplete(status, captureMode) {
  if (status === "pending") return false;
  return status !== "authorized" || captureMode === "Manual";
}

/** @param {HTMLElement} panel */
function followCharge(panel) {
  const authorizationId = panel.dataset.authorizationId ?? "";
  const captureMode = panel.dataset.captureMode ?? "Auto";
  if (authorizationId === "" || isCheckoutComplete(panel.dataset.status ?? "", captureMode)) return;

  const liveNote = /** @type {HTMLElement | null} */ (panel.querySelector('[data-role="live-note"]'));
  if (liveNote) liveNote.hidden = false;
  const source = new EventSource(`/payments/charges/${encodeURIComponent(authorizationId)}/events`);
  source.addEventListener("charge", (event) => {
    const charge = /** @type {Charge} */ (JSON.parse(/** @type {MessageEvent} */ (event).data));
    render(panel, charge);
    if (isCheckoutComplete(charge.status, charge.captureMode)) {
      source.close();
      if (liveNote) liveNote.hidden = true;
    }
  });
  source.addEventListener("error", () => {
    // A dropped connection reconnects by itself; a refused one (CLOSED) does not.
    if (source.readyState === EventSource.CLOSED && liveNote) {
      liveNote.textContent = "Live updates stopped. Reload the page to see the latest status.";
    }
  });
}

/**
 * @param {HTMLElement} panel
 * @param {Charge} charge
 */
function render(panel, charge) {
  if (panel.dataset.status === charge.status) return;
  const template = /** @type {HTMLTemplateElement | null} */ (
    document.querySelector(`template[data-status-template="${CSS.escape(charge.status)}"]`)
  );
  const body = panel.querySelector('[data-role="status-body"]');
  if (!template || !body) return;
  const content = /** @type {DocumentFragment} */ (template.content.cloneNode(true));
  const reason = content.querySelector('[data-role="reason-message"]');
  if (reason && charge.message) reason.textContent = charge.message; // text, never markup
  body.replaceChildren(content);
  panel.dataset.status = charge.status;
  const demoClock = /** @type {HTMLElement | null} */ (document.querySelector('[data-role="demo-clock"]'));
  if (demoClock) demoClock.hidden = charge.status !== "pending";
}

/** Demo only (embedded sandbox): move the virtual clock so the scheduled attempt runs now. */
function setUpDemoClock() {
  const button = /** @type {HTMLButtonElement | null} */ (
    document.querySelector('[data-role="advance-clock"]')
  );
  const result = document.querySelector('[data-role="advance-clock-result"]');
  if (!button || !result) return;
  button.addEventListener("click", async () => {
    button.disabled = true;
    const answer = await postJson("/demo/sandbox-clock", {});
    result.textContent = answer.ok
      ? "Clock moved 5 minutes: the attempt is running; watch the status above."
      : answer.problem.detail;
    button.disabled = false;
  });
}

/** After an unknown outcome, the same charge request again learns it (same key: never charged twice). */
function setUpCheckAgain() {
  const button = /** @type {HTMLButtonElement | null} */ (
    document.querySelector('[data-role="check-again"]')
  );
  const result = document.querySelector('[data-role="check-again-result"]');
  if (!button || !result) return;
  button.addEventListener("click", async () => {
    button.disabled = true;
    const { cartId = "", captureMode = "Auto", timing = "now", schedule = "" } = button.dataset;
    const answer = await postJson("/payments/charges", {
      cartId,
      captureMode,
      timing,
      ...(timing === "scheduled" ? { schedule } : {}),
    });
    if (answer.ok) {
      window.location.reload();
      return;
    }
    result.textContent = answer.problem.detail;
    button.disabled = false;
  });
}
