import { type PricedLine, readableCode } from "./carts.js";

// "Re-order every month": a signed-in customer turns a paid order into a subscription. The shop
// keeps it here (your subscriptions table in a real shop): the items and prices as they were
// ordered, the next renewal date on the payment service's clock, and every period's renewal with
// its outcome. The renewal job (src/subscriptions/renewal-job.ts) moves them on.

/** Where one period's renewal stands (the shop's view of its batch item). */
export type RenewalStatus =
  /** Being charged, or sent with no definite answer yet: the next pass resends the same key. */
  | "charging"
  /** Declined with a reason worth retrying: a new attempt (new key) at `nextAttemptAt`. */
  | "retrying"
  /** Accepted (a challenge): the outcome arrives by webhook on the renewal's order. */
  | "awaiting"
  | "charged"
  /** Declined for good: a reason not worth retrying, or the retries ran out. */
  | "declined"
  /** Nobody can tell whether it charged (outcome unknown past the key's window): a person looks. */
  | "needs_review";

export interface Renewal {
  /** 1 for the first renewal after the original order, 2 for the next, … */
  period: number;
  /** The batch item id: one per subscription and period, so a period is never charged twice. */
  itemId: string;
  /** The renewal order's reference (also the order reference sent to the service). */
  reference: string;
  /** When the period fell due, on the service's clock. */
  dueAt: Date;
  status: RenewalStatus;
  /** Attempts sent so far (each with its own idempotency key). */
  attempts: number;
  /** The decline reason of the last attempt (e.g. PAYMENT_METHOD_NO_FUNDS). */
  reason?: string;
  /** A scheduled retry, on the service's clock. */
  nextAttemptAt?: Date;
  /** Set once the renewal became an order of the shop (charged or awaiting its webhook). */
  orderReference?: string;
  updatedAt: Date;
}

export interface Subscription {
  /** "SUB-7K3QX9M2". */
  id: string;
  customerId: string;
  /** The paid order it was started from. */
  sourceReference: string;
  /** Items and prices as ordered: every renewal charges exactly these. */
  lines: PricedLine[];
  total: string;
  currency: string;
  /** On the service's clock; each period is this plus n calendar months. */
  startedAt: Date;
  /** The next period to renew and when it falls due (on the service's clock). */
  nextPeriod: number;
  nextRenewalAt: Date;
  status: "active" | "stopped";
  /** Why it stopped: a decline reason, or CANCELLED_BY_CUSTOMER. */
  stoppedReason?: string;
  stoppedAt?: Date;
  /** Oldest first. */
  renewals: Renewal[];
}

export const CANCELLED_BY_CUSTOMER = "CANCELLED_BY_CUSTOMER";

function newSubscriptionId(): string {
  return readableCode("SUB-", 8);
}

export interface NewSubscription {
  customerId: string;
  sourceReference: string;
  lines: PricedLine[];
  total: string;
  currency: string;
  startedAt: Date;
  firstRenewalAt: Date;
}

export class SubscriptionBook {
  readonly #byId = new Map<string, Subscription>();

  /** Starts one, or returns the one already started from that order (a double click). */
  start(input: NewSubscription): { subscription: Subscription; created: boolean } {
    const existing = this.fromOrder(input.sourceReference);
    if (existing) return { subscription: existing, created: false };
    const subscription: Subscription = {
      id: newSubscriptionId(),
      customerId: input.customerId,
      sourceReference: input.sourceReference,
      lines: input.lines,
      total: input.total,
      currency: input.currency,
      startedAt: input.startedAt,
      nextPeriod: 1,
      nextRenewalAt: input.firstRenewalAt,
      status: "active",
      renewals: [],
    };
    this.#byId.set(subscription.id, subscription);
    return { subscription, created: true };
  }

  get(id: string): Subscription | undefined {
    return this.#byId.get(id);
  }

  /** The active or stopped subscription started from an order, if any. */
  fromOrder(sourceReference: string): Subscription | undefined {
    return this.all().find((each) => each.sourceReference === sourceReference);
  }

  /** The subscription a renewal order belongs to. */
  ofRenewalOrder(reference: string): Subscription | undefined {
    return this.all().find((each) => each.renewals.some((renewal) => renewal.orderReference === reference));
  }

  /** Oldest first. */
  all(): Subscription[] {
    return [...this.#byId.values()];
  }

  forCustomer(customerId: string): Subscription[] {
    return this.all().filter((each) => each.customerId === customerId);
  }

  stop(subscription: Subscription, reason: string, at: Date): void {
    if (subscription.status === "stopped") return;
    subscription.status = "stopped";
    subscription.stoppedReason = reason;
    subscription.stoppedAt = at;
    // A scheduled retry is a new attempt: a stopped subscription makes none. (A renewal still being
    // confirmed is resent with its own key until its outcome is known: it may have charged.)
    for (const renewal of subscription.renewals) {
      if (renewal.status === "retrying") {
        renewal.status = "declined";
        delete renewal.nextAttemptAt;
        renewal.updatedAt = at;
      }
    }
  }
}
