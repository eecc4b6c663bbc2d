// @ts-check
// Shared by the page scripts: calls to the shop's JSON routes with the session's CSRF token.

/**
 * @typedef {object} Problem An RFC 9457 problem as the middleware answers it.
 * @property {number} status
 * @property {string} title
 * @property {string} detail Written for the reader; safe to show as it is.
 * @property {string} [reason] The specification's error reason, e.g. "TOKEN_REVOKED".
 * @property {boolean} [retryable]
 * @property {string} [type] The problem type, e.g. "urn:purchase-auth:problem:payment-confirming".
 */

/** @returns {string} */
function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]')?.getAttribute("content") ?? "";
}

const NETWORK_PROBLEM = /** @type {Problem} */ ({
  status: 0,
  title: "Network error",
  detail: "We could not reach the shop. Please check your connection and try again.",
});

/**
 * POSTs JSON. Resolves with `{ ok: true, body }` or `{ ok: false, problem }`; never throws.
 * @param {string} url
 * @param {Record<string, unknown>} body
 * @returns {Promise<{ ok: true, body: any } | { ok: false, problem: Problem }>}
 */
export async function postJson(url, body) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        "x-csrf-token": csrfToken(),
      },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
  } catch {
    return { ok: false, problem: NETWORK_PROBLEM };
  }
  const parsed = await response.json().catch(() => undefined);
  if (response.ok) return { ok: true, body: parsed };
  const problem = /** @type {Problem | undefined} */ (parsed);
  if (problem && typeof problem.detail === "string") return { ok: false, problem };
  return {
    ok: false,
    problem: { status: response.status, title: "Error", detail: "Something went wrong. Please try again." },
  };
}
