import { isDefiniteRefusal } from "../charges/merchant-write.js";
import { type MerchantWrites, type WriteResult, writeOf } from "../charges/merchant-writes.js";
import { lastSendOf, mayHaveReached } from "../charges/operation-log.js";
import type { ResolvedOptions } from "../options.js";
import type { ChargeRecord } from "../stores/types.js";
import { Sweep } from "./sweep.js";

// The reconciler's duty to merchant writes (capture, cancel, refund) whose answer was lost and that
// nobody sends again: each stays `sent` in its charge's operation log until a pass settles it, as a
// re-press of the back office would. Inside the service's idempotency window it is sent again with
// its key and body, if a send of it may have reached the service (one core reported `not_sent` did
// nothing: the merchant was told so, and may have pressed a new sequence since); past it, never
// again: a write no send of which can have reached the service is not applied (no alert), the order
// tells a capture of the rest or a cancel, and a capture or refund of an amount is given up to
// review (an alert, then `unconfirmed`). Nothing is decided while a send of it may still be on its
// way (begun less than `timeoutMs` ago, here or on another instance).

/** What one pass did to merchant writes whose answer was lost. */
export interface WritesReport {
  /** Writes still `sent` looked at. */
  examined: number;
  /** Of those, the writes this pass did send again (inside the window), whatever their answer. */
  resent: number;
  /** Sent again, or answered from the log or the order past the window: now done, refused or not applied. */
  resolved: number;
  /**
   * Sent again and still without a definite answer, or past the window while a send of it may still
   * be on its way: looked at again next pass.
   */
  stillUnknown: number;
  /** Past the window with their outcome unknown: recorded `unconfirmed`, and this pass raised the alert. */
  needsReview: number;
  /** Could not be looked at (their charge could not be read or written): looked at again next pass. */
  failed: number;
}

/**
 * Pages of charges with a write still `sent` looked at per pass: normally none, after an outage of
 * the service a few, and the next passes go on with the rest.
 */
const PAGES_PER_PASS = 5;

export class SentWrites {
  readonly #options: ResolvedOptions;
  readonly #writes: MerchantWrites;
  readonly #sweep = new Sweep(PAGES_PER_PASS);
  #warnedNoList = false;

  constructor(options: ResolvedOptions, writes: MerchantWrites) {
    this.#options = options;
    this.#writes = writes;
  }

  /** Settles this pass's writes still `sent`; a store without `listSentWrites` has none to give. */
  async settle(report: WritesReport): Promise<void> {
    const { store, logger } = this.#options;
    if (store.listSentWrites === undefined) {
      if (!this.#warnedNoList) {
        this.#warnedNoList = true;
        logger.warn?.(
          "purchase-auth: the charge store has no listSentWrites(); a merchant write whose answer was lost is settled only when it is sent again",
        );
      }
      return;
    }
    for (const listed of await this.#sweep.next(store.listSentWrites.bind(store))) {
      for (const [id, entry] of Object.entries(listed.operationLog ?? {})) {
        // Being sent by a request of this process right now: that request records the outcome.
        if (entry.state !== "sent" || this.#writes.isSending(listed.reference, id)) continue;
        try {
          await this.#settleOne(listed.reference, id, report);
        } catch (error) {
          // One charge the store cannot read or write now must not stop the others.
          report.failed++;
          logger.warn?.(
            "purchase-auth: a merchant write whose answer was lost could not be settled this pass",
            {
              operation: entry.operation,
              error: error instanceof Error ? error.name : typeof error,
            },
          );
        }
      }
    }
  }

  async #settleOne(reference: string, id: string, report: WritesReport): Promise<void> {
    // The copy was listed at the start of the pass: a re-press or another instance may have
    // settled the write since. Decided on the charge as stored now.
    const charge = await this.#options.store.findByReference(reference);
    const entry = charge?.operationLog?.[id];
    if (charge === undefined || entry?.state !== "sent" || !hasOrder(charge)) return;
    // Sent moments ago: its request (of this instance or another) may still be sending it.
    if (this.#options.now() - lastSendOf(entry, charge) < this.#options.timeoutMs) return;
    const { write, bodyKnown } = writeOf(entry);
    const resend = this.#writes.mayResend(entry);
    // Inside its window, an entry no send of which can have reached the service is the merchant's
    // to send again (they were told nothing happened), and one stored before amounts were recorded
    // cannot be sent by us; past it, either is settled below like any other.
    if (resend && (!bodyKnown || !mayHaveReached(entry))) return;
    report.examined++;
    let result: WriteResult;
    try {
      // Counted when the send goes out (its stored change made), not when one is merely meant: an
      // entry settled meanwhile is answered from the log instead, without a send.
      result = await this.#writes.resume(charge, write, entry, () => report.resent++);
    } catch (error) {
      // A refusal of the service is recorded on the entry by the send; anything else stays unknown.
      if (isDefiniteRefusal(error)) report.resolved++;
      else report.stillUnknown++;
      return;
    }
    if (result.kind === "confirming") report.stillUnknown++;
    else if (result.kind !== "unconfirmed") report.resolved++;
    else if (result.alerted) report.needsReview++;
  }
}

/** Writes are only ever recorded for an authorized order; a record without one has nothing to send. */
function hasOrder(charge: ChargeRecord): boolean {
  return charge.orderId !== undefined && charge.authorizationId !== undefined;
}
