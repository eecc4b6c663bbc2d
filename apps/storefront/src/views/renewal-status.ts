import type { RenewalStatus } from "../shop/subscriptions.js";
import type { Tone } from "./charge-status.js";

// How a renewal's status reads, for the customer and in the merchant's list.

export interface RenewalCopy {
  label: string;
  tone: Tone;
  /** For the customer (declines show the decline's shopper message instead). */
  detail?: string;
}

export const RENEWAL_COPY: Record<RenewalStatus, RenewalCopy> = {
  charging: {
    label: "Being confirmed",
    tone: "pending",
    detail: "We are confirming this renewal with the payment service. You will not be charged twice.",
  },
  retrying: { label: "Will be retried", tone: "pending" },
  awaiting: {
    label: "Awaiting confirmation",
    tone: "pending",
    detail: "Your payment method needs a confirmation; the order updates when it arrives.",
  },
  charged: { label: "Renewed", tone: "success" },
  declined: { label: "Declined", tone: "danger" },
  needs_review: {
    label: "Being checked",
    tone: "neutral",
    detail:
      "We could not confirm whether this renewal went through. We are checking it; nothing is charged again meanwhile.",
  },
};
