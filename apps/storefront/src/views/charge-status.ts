import type { ChargeRecord, ChargeStatus } from "@purchase-auth/express";
import { shopperMessageFor } from "@purchase-auth/express";
import { html, type SafeHtml } from "../http/html.js";

// How a charge's status reads, for the shopper and in the merchant's list. The order page renders
// one <template> per status with this text, and its script swaps them in as live updates arrive:
// the wording lives here only.

export type Tone = "pending" | "info" | "success" | "neutral" | "danger";

export interface StatusCopy {
  label: string;
  tone: Tone;
  /** For the shopper; the failed status shows the decline's shopper message instead. */
  detail: string;
}

export const STATUS_COPY: Record<ChargeStatus, StatusCopy> = {
  pending: {
    label: "Payment pending",
    tone: "pending",
    detail: "We are waiting for the payment service to confirm your payment.",
  },
  authorized: {
    label: "Payment authorized",
    tone: "info",
    detail: "The amount is reserved on your payment method. We charge it when your order ships.",
  },
  partially_captured: {
    label: "Partly charged",
    tone: "info",
    detail: "Part of the reserved amount has been charged; the rest follows when the remaining items ship.",
  },
  captured: { label: "Paid", tone: "success", detail: "Thank you! Your payment went through." },
  partially_refunded: {
    label: "Partly refunded",
    tone: "neutral",
    detail: "Part of your payment has been refunded to your payment method.",
  },
  refunded: { label: "Refunded", tone: "neutral", detail: "Your payment has been refunded in full." },
  cancelled: {
    label: "Cancelled",
    tone: "neutral",
    detail: "The reservation was released. Nothing was charged.",
  },
  expired: {
    label: "Authorization expired",
    tone: "neutral",
    detail: "The reservation lapsed before it was charged. Nothing was charged.",
  },
  failed: { label: "Payment failed", tone: "danger", detail: "" },
  needs_review: {
    label: "Being checked",
    tone: "pending",
    detail:
      "We could not confirm your payment automatically. Our team is checking it with the payment service; please do not pay again. We will contact you.",
  },
};

export function statusBadge(status: ChargeStatus): SafeHtml {
  const copy = STATUS_COPY[status];
  return html`<span class="badge badge--${copy.tone}" data-role="status-label">${copy.label}</span>`;
}

/**
 * What the shopper reads under the badge. `pendingDetail` replaces the general pending text;
 * `tryAgain` is the failed order's way back to checkout with its items.
 */
export function statusBody(
  status: ChargeStatus,
  charge: Pick<ChargeRecord, "reason"> | undefined,
  pendingDetail?: string,
  tryAgain?: SafeHtml,
): SafeHtml {
  if (status === "failed") {
    // The middleware's shopper message for the reason: readable for every reason of the spec.
    const message = shopperMessageFor(charge?.reason);
    return html`${statusBadge(status)}<p class="status-detail" data-role="reason-message">${message}</p>
<p class="small">Nothing was charged.</p>${tryAgain}`;
  }
  const detail = status === "pending" && pendingDetail ? pendingDetail : STATUS_COPY[status].detail;
  return html`${statusBadge(status)}<p class="status-detail">${detail}</p>`;
}
