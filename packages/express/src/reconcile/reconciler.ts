import { IdempotencyError, IdempotencyWindowPassedError, PurchaseAuthError } from "@purchase-auth/core";
import { type Authorizer, isSameUnansweredAttempt } from "../charges/authorizer.js";
import type { Charges } from "../charges/charges.js";
import type { MerchantWrites } from "../charges/merchant-writes.js";
import { mayHaveReached } from "../charges/operation-log.js";
import type { ResolvedOptions } from "../options.js";
import type { ChargeRecord, ChargeStore } from "../stores/types.js";
import { outcomeOverdueAt } from "./overdue.js";
import { SentWrites, type WritesReport } from "./sent-writes.js";
import { BATCH, type ListPage, Sweep } from "./sweep.js";

// The level-triggered loop that moves every open charge towards the service's truth when no request
// and no webhook does (a crash, a lost answer, a lost webhook): like a controller's reconcile loop,
// it looks at what is pending, not at what happened.

/** What one `reconcile()` pass did. */
export interface ReconcileReport {
  /** Pending charges looked at. */
  examined: number;
  /** Create calls re-sent with their key whose outcome is now known. */
  resolved: number;
  /** Re-sent, and still without a definite answer (tried again next pass). */
  stillUnknown: number;
  /**
   * Given up to review: past the idempotency window (never sent again), or accepted and without
   * news of the outcome long after the last scheduled attempt (`outcomeGraceMs`).
   */
  needsReview: number;
  /**
   * Stored webhook events this pass applied (marked applied): events that a crash or a failing
   * listener had left unapplied, counted one by one, whether or not they changed their charge
   * (news already applied changes nothing). An event whose listener failed again is not counted.
   */
  eventsApplied: number;
  /**
   * Merchant writes whose answer was lost and that nobody sent again (still `sent` in the operation
   * log): sent again with their key inside the window, settled from the order or given up to review
   * past it.
   */
  writes: WritesReport;
}

/**
 * Pages of pending charges looked at per pass, least recently written first, going on where the
 * last pass stopped: a pass is bounded, and a sweep still reaches every pending charge.
 */
const PENDING_PAGES_PER_PASS = 10;
/**
 * Pages of unanswered charges (no authorization id: their key must be resent within the window)
 * looked at first in every pass: a few, because normally there are none, and after an outage of
 * the service the next passes go on with the rest.
 */
const UNANSWERED_PAGES_PER_PASS = 5;

export class Reconciler {
  readonly #options: ResolvedOptions;
  readonly #charges: Charges;
  readonly #authorizer: Authorizer;
  readonly #sentWrites: SentWrites;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<ReconcileReport> | undefined;
  #warnedNoList = false;
  /** Where the next pass goes on through the charges with unapplied events. */
  #sweepAfter: string | undefined;
  readonly #pendingSweep = new Sweep(PENDING_PAGES_PER_PASS);
  readonly #unansweredSweep = new Sweep(UNANSWERED_PAGES_PER_PASS);

  constructor(options: ResolvedOptions, charges: Charges, authorizer: Authorizer, writes: MerchantWrites) {
    this.#options = options;
    this.#charges = charges;
    this.#authorizer = authorizer;
    this.#sentWrites = new SentWrites(options, writes);
  }

  /** Runs a pass now and then every `reconcileIntervalMs` (unless 0); the timer never keeps the process alive. */
  start(): void {
    const interval = this.#options.reconcileIntervalMs;
    if (interval === 0 || this.#timer !== undefined) return;
    const tick = () => {
      this.reconcile().catch((error) => {
        this.#options.logger.error?.("purchase-auth: a reconcile pass failed", { error: String(error) });
      });
    };
    this.#timer = setInterval(tick, interval);
    this.#timer.unref();
    setImmediate(tick).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One pass over the pending charges; concurrent calls share the pass in progress. */
  reconcile(): Promise<ReconcileReport> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /**
   * This pass's pending charges: first the unanswered ones, whose keys must be resent within the
   * hour, then the next pages of the sweep through every pending charge. Without the first list,
   * more than 2,000 accepted charges waiting for their schedule delayed a lost answer by a pass
   * per 2,000 (beyond ~100,000, past the window). Each charge once.
   */
  async #pendingCharges(store: ChargeStore, listPending: ListPage): Promise<ChargeRecord[]> {
    if (store.listUnanswered === undefined) return this.#pendingSweep.next(listPending);
    const unanswered = await this.#unansweredSweep.next(store.listUnanswered.bind(store));
    const seen = new Set(unanswered.map((charge) => charge.reference));
    // Unanswered charges are the unanswered pages' to send, this pass's or the next ones' (more than a
    // pass takes after an outage of the service), not extra sends of the sweep: each send may take
    // the router's timeout. Unless the store's listUnanswered ignores the cursor and never gets past
    // its first page: then the sweep reaches the rest, as before listUnanswered existed.
    const leaveUnanswered = !this.#unansweredSweep.ignoresCursor;
    const swept = (await this.#pendingSweep.next(listPending)).filter(
      (charge) => !seen.has(charge.reference) && !(leaveUnanswered && charge.authorizationId === undefined),
    );
    return [...unanswered, ...swept];
  }

  #isOverdue(charge: ChargeRecord): boolean {
    return this.#options.now() >= outcomeOverdueAt(charge, this.#options);
  }

  async #pass(): Promise<ReconcileReport> {
    const report: ReconcileReport = {
      examined: 0,
      resolved: 0,
      stillUnknown: 0,
      needsReview: 0,
      eventsApplied: 0,
      writes: { examined: 0, resent: 0, resolved: 0, stillUnknown: 0, needsReview: 0, failed: 0 },
    };
    const { store, logger } = this.#options;
    if (store.listPending === undefined) {
      if (!this.#warnedNoList) {
        this.#warnedNoList = true;
        logger.warn?.(
          "purchase-auth: the charge store has no listPending(); nothing is reconciled in the background",
        );
      }
      return report;
    }
    for (const charge of await this.#pendingCharges(store, store.listPending.bind(store))) {
      // Being sent by a request of this process right now: that request records the outcome.
      if (this.#authorizer.isSending(charge)) continue;
      report.examined++;
      if (charge.authorizationId !== undefined) {
        // Accepted (202): the outcome comes by webhook; apply what a crash may have left parked.
        const { charge: after, eventsApplied } = await this.#charges.retryWaitingEvents(charge);
        report.eventsApplied += eventsApplied;
        if (after.status === "pending" && this.#isOverdue(after)) {
          // No webhook told the outcome long after the last attempt: a person looks it up.
          // Decided on the copy listed at the start of the pass: it must still hold as stored.
          const { moved } = await this.#authorizer.markNeedsReview(
            after,
            "outcome_overdue",
            (current) =>
              current.status === "pending" &&
              current.authorizationId === after.authorizationId &&
              this.#isOverdue(current),
          );
          if (moved) report.needsReview++;
        }
        continue;
      }
      const pending = charge.pendingAuthorization;
      // None of its sends can have reached the service: nothing was charged, and the shopper was
      // told so. Never sent from here. (The change that counts the last such send fails the charge,
      // so a pending one is only a record written by hand.)
      if (pending !== undefined && !mayHaveReached(pending)) continue;
      if (pending === undefined || !this.#authorizer.canResend(pending)) {
        const { moved } = await this.#authorizer.markNeedsReview(charge);
        if (moved) report.needsReview++;
        continue;
      }
      // The copy was listed at the start of the pass, which may be minutes ago: a request may have
      // resent the key since, or another instance given the charge up to review.
      const current = await store.findByReference(charge.reference);
      if (!current || !isSameUnansweredAttempt(current, charge)) continue;
      try {
        await this.#authorizer.send(current);
        report.resolved++;
      } catch (error) {
        if (this.#authorizer.movedToReview(error)) {
          // The service says the key's window has passed: this call gave the charge up to review.
          report.needsReview++;
        } else if (isPastKeyWindow(error)) {
          // The same, but another request or instance gave it up first (and counted it).
        } else if (PurchaseAuthError.isInstance(error) && error.outcome === "refused") {
          // A definite refusal: recorded on the charge by the authorizer.
          report.resolved++;
        } else {
          // Unknown, or nothing reached the service this time (its token endpoint was down, say).
          report.stillUnknown++;
        }
      }
    }
    // Charges past pending whose events a crash left stored but unapplied (see the store method),
    // a page per pass, so charges whose events keep failing cannot hide the others.
    const unapplied = (await store.listWithUnappliedEvents?.(BATCH, this.#sweepAfter)) ?? [];
    this.#sweepAfter = unapplied.length < BATCH ? undefined : unapplied[unapplied.length - 1]!.reference;
    for (const charge of unapplied) {
      if (charge.status === "pending" || this.#authorizer.isSending(charge)) continue;
      report.examined++;
      report.eventsApplied += (await this.#charges.retryWaitingEvents(charge)).eventsApplied;
    }
    // Merchant writes whose answer was lost: before the window passes, sent again as a re-press would.
    await this.#sentWrites.settle(report.writes);
    const { writes } = report;
    if (
      report.needsReview + report.resolved + report.stillUnknown + report.eventsApplied > 0 ||
      writes.resolved + writes.stillUnknown + writes.needsReview + writes.failed > 0
    ) {
      logger.info?.("purchase-auth: reconcile pass", { ...report });
    }
    return report;
  }
}

function isPastKeyWindow(error: unknown): boolean {
  if (IdempotencyWindowPassedError.isInstance(error)) return true;
  return IdempotencyError.isInstance(error) && error.reason === "IDEMPOTENCY_RESPONSE_EXPIRED";
}
