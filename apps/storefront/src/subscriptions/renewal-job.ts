import {
  type BatchItemRecord,
  type BatchStore,
  type ChargeClient,
  chargeStoredToken,
  MemoryBatchStore,
} from "@purchase-auth/batch";
import type { Logger } from "@purchase-auth/core";
import type { ChargeStore } from "@purchase-auth/express";
import { findCustomer } from "../shop/customers.js";
import type { OrderBook } from "../shop/orders.js";
import type { Renewal, Subscription, SubscriptionBook } from "../shop/subscriptions.js";
import { periodDueAt } from "./calendar.js";
import { declineReasonOf, nextAttemptAt, RENEWAL_DECLINE_POLICY } from "./decline-rules.js";
import {
  RENEWAL_BATCH_ID,
  recordRenewalOrder,
  renewalItem,
  renewalItemId,
  renewalReference,
} from "./renewal-order.js";

// The renewal job: a timer in the shop's process (and the demo clock control, which runs it at
// once) looks for subscriptions whose next period has fallen due ON THE PAYMENT SERVICE'S CLOCK,
// the embedded sandbox's virtual clock in the demo, and charges each through @purchase-auth/batch
// (`chargeStoredToken`: a write-ahead record, a key per attempt, the decline policy). Passes never
// overlap: a pass asked for while one runs starts when it ends.

export interface RenewalJobOptions {
  subscriptions: SubscriptionBook;
  orders: OrderBook;
  /** The payment middleware's charge store: renewal orders join the shop's other orders there. */
  charges: ChargeStore;
  client: ChargeClient;
  /** The payment service's time, epoch milliseconds. */
  now: () => number;
  /**
   * The payment middleware's reconcile pass (`router.reconcile`): applies webhooks that arrived for
   * an accepted renewal before its order was recorded. Run before accepted renewals are looked at.
   */
  reconcile?: () => Promise<unknown>;
  /** Where batch items live; default in memory. `PostgresBatchStore` survives a crash. */
  store?: BatchStore;
  logger?: Logger;
}

/** What one pass did. */
export interface RenewalReport {
  charged: number;
  /** Accepted: the outcome arrives by webhook. */
  awaiting: number;
  /** Declined with a reason worth retrying: a new attempt is scheduled. */
  retrying: number;
  declined: number;
  /** Sent without a definite answer: the next pass resends with the same key. */
  open: number;
  /** Subscriptions stopped in this pass. */
  stopped: number;
}

const emptyReport = (): RenewalReport => ({
  charged: 0,
  awaiting: 0,
  retrying: 0,
  declined: 0,
  open: 0,
  stopped: 0,
});

export class RenewalJob {
  readonly store: BatchStore;
  readonly #options: RenewalJobOptions;
  #queue: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RenewalJobOptions) {
    this.#options = options;
    this.store = options.store ?? new MemoryBatchStore();
  }

  /** One pass now, after the one in progress (if any). */
  run(): Promise<RenewalReport> {
    const pass = this.#queue.then(() => this.#pass());
    this.#queue = pass.catch(() => undefined);
    return pass;
  }

  /** Runs a pass every `intervalMs` (real time); the timer never keeps the process alive. */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.run().catch((error: unknown) => {
        this.#options.logger?.error?.("storefront: a renewal pass failed", { error: String(error) });
      });
    }, intervalMs);
    this.#timer.unref();
  }

  /** Stops the timer and waits for the pass in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#queue;
  }

  async #pass(): Promise<RenewalReport> {
    const report = emptyReport();
    const subscriptions = this.#options.subscriptions.all();
    const awaiting = subscriptions.some((each) =>
      each.renewals.some((renewal) => renewal.status === "awaiting"),
    );
    if (awaiting) await this.#options.reconcile?.();
    for (const subscription of subscriptions) {
      await this.#renew(subscription, report);
    }
    return report;
  }

  async #renew(subscription: Subscription, report: RenewalReport): Promise<void> {
    const now = new Date(this.#options.now());
    for (const renewal of subscription.renewals) {
      if (renewal.status === "awaiting") await this.#settleAwaiting(subscription, renewal, report);
      const due = renewal.nextAttemptAt === undefined || renewal.nextAttemptAt <= now;
      if ((renewal.status === "charging" || renewal.status === "retrying") && due) {
        await this.#charge(subscription, renewal, report);
      }
    }
    // New periods, oldest first, one at a time: a period still being charged or retried holds the
    // next one back (a customer is never dunned for two months at once).
    while (
      subscription.status === "active" &&
      subscription.nextRenewalAt <= now &&
      !subscription.renewals.some((each) => isOpen(each))
    ) {
      const period = subscription.nextPeriod;
      const renewal: Renewal = {
        period,
        itemId: renewalItemId(subscription.id, period),
        reference: renewalReference(subscription.id, period),
        dueAt: subscription.nextRenewalAt,
        status: "charging",
        attempts: 0,
        updatedAt: now,
      };
      subscription.renewals.push(renewal);
      subscription.nextPeriod = period + 1;
      subscription.nextRenewalAt = periodDueAt(subscription.startedAt, period + 1);
      await this.#charge(subscription, renewal, report);
    }
  }

  /** One call for the period (or none, when its batch item is final already). */
  async #charge(subscription: Subscription, renewal: Renewal, report: RenewalReport): Promise<void> {
    const customer = findCustomer(subscription.customerId);
    if (!customer) return;
    if (subscription.status !== "active" && !(await this.#mayHaveCharged(renewal))) {
      // Stopped, and nothing of this renewal's current attempt went out: it must not go out now.
      this.#endStopped(subscription, renewal);
      return;
    }
    let record: BatchItemRecord;
    try {
      record = await chargeStoredToken({
        client: this.#options.client,
        store: this.store,
        batchId: RENEWAL_BATCH_ID,
        item: renewalItem(subscription, renewal, customer.customerToken),
        declinePolicy: RENEWAL_DECLINE_POLICY,
      });
    } catch (error) {
      // Credentials refused, options wrong: nothing took effect; the next pass tries again.
      this.#options.logger?.error?.("storefront: a renewal could not be sent", {
        subscription: subscription.id,
        period: renewal.period,
        error: String(error),
      });
      report.open++;
      return;
    }
    await this.#apply(subscription, renewal, record, report);
  }

  async #apply(
    subscription: Subscription,
    renewal: Renewal,
    record: BatchItemRecord,
    report: RenewalReport,
  ): Promise<void> {
    const now = new Date(this.#options.now());
    renewal.attempts = record.attempt;
    renewal.updatedAt = now;
    delete renewal.nextAttemptAt;
    switch (record.status) {
      case "charged":
      case "accepted": {
        await recordRenewalOrder(this.#options, subscription, renewal, record.result!, now);
        renewal.orderReference = renewal.reference;
        delete renewal.reason;
        renewal.status = record.status === "charged" ? "charged" : "awaiting";
        if (record.status === "charged") report.charged++;
        else report.awaiting++;
        return;
      }
      case "retry_scheduled": {
        if (subscription.status !== "active") {
          // The resend of a stopped subscription's renewal was declined: no new attempt follows.
          renewal.reason = declineReasonOf(record.reason);
          this.#endStopped(subscription, renewal);
          report.declined++;
          return;
        }
        renewal.status = "retrying";
        renewal.reason = declineReasonOf(record.reason);
        renewal.nextAttemptAt = nextAttemptAt(now, record.attempt) ?? now;
        report.retrying++;
        return;
      }
      case "declined":
      case "rejected":
        this.#decline(subscription, renewal, declineReasonOf(record.reason), report);
        return;
      case "needs_review":
        renewal.status = "needs_review";
        renewal.reason = declineReasonOf(record.reason);
        this.#stop(subscription, "NEEDS_REVIEW", report);
        return;
      default:
        // pending, sending, unknown: no definite answer yet; the next pass resends the same key.
        renewal.status = "charging";
        report.open++;
    }
  }

  /** An accepted renewal: its order's charge is moved on by webhooks; follow it. */
  async #settleAwaiting(subscription: Subscription, renewal: Renewal, report: RenewalReport): Promise<void> {
    const charge = await this.#options.charges.findByReference(renewal.reference);
    if (!charge || charge.status === "pending") return;
    renewal.updatedAt = new Date(this.#options.now());
    if (charge.status === "failed") {
      this.#decline(subscription, renewal, declineReasonOf(charge.reason), report);
    } else if (charge.status === "needs_review") {
      renewal.status = "needs_review";
      this.#stop(subscription, "NEEDS_REVIEW", report);
    } else {
      renewal.status = "charged";
      report.charged++;
    }
  }

  /**
   * Whether the renewal's current attempt may have reached the service: its key was written ahead
   * and sent (sending) or its answer was lost (unknown). Then only that key may be sent again, to
   * learn the outcome; a pending item has sent nothing.
   */
  async #mayHaveCharged(renewal: Renewal): Promise<boolean> {
    const record = await this.store.get(RENEWAL_BATCH_ID, renewal.itemId);
    return record?.status === "sending" || record?.status === "unknown";
  }

  /** A renewal of a stopped subscription that will not be charged: declined, with the stop's reason. */
  #endStopped(subscription: Subscription, renewal: Renewal): void {
    renewal.status = "declined";
    renewal.reason ??= subscription.stoppedReason ?? "STOPPED";
    delete renewal.nextAttemptAt;
    renewal.updatedAt = new Date(this.#options.now());
  }

  #decline(subscription: Subscription, renewal: Renewal, reason: string, report: RenewalReport): void {
    renewal.status = "declined";
    renewal.reason = reason;
    report.declined++;
    // Not worth retrying, or the retries ran out: the subscription stops, and says why.
    this.#stop(subscription, reason, report);
  }

  #stop(subscription: Subscription, reason: string, report: RenewalReport): void {
    if (subscription.status === "stopped") return;
    this.#options.subscriptions.stop(subscription, reason, new Date(this.#options.now()));
    report.stopped++;
  }
}

export function isOpen(renewal: Renewal): boolean {
  return renewal.status === "charging" || renewal.status === "retrying" || renewal.status === "awaiting";
}
