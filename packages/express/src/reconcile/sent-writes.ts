import { InvalidRequestError, OrderStateError } from "@purchase-auth/core";
import { type MerchantWrites, type WriteResult, writeOf } from "../charges/merchant-writes.js";
import type { ResolvedOptions } from "../options.js";
import type { ChargeRecord } from "../stores/types.js";
import { Sweep } from "./sweep.js";

// The reconciler's duty to merchant writes (capture, cancel, refund) whose answer was lost and that
// nobody sends again: each stays `sent` in its charge's operation log until a pass settles it, as a
// re-press of the back office would. Inside the service's idempotency window it is sent again with
// its key and body; past it, never again: the order tells a capture of the rest or a cancel, and a
// capture or refund of an amount is given up to review (an alert, then `unconfirmed`).

/** What one pass did to merchant writes whose answer was lost. */
export interface WritesReport {
  /** Writes still `sent` looked at. */
  examined: number;
  /** Sent again, or answered from the order past the window: now done, refused or not applied. */
  resolved: number;
  /** Sent again, and still without a definite answer (tried again next pass, inside the window). */
  stillUnknown: number;
  /** Past the window with their outcome unknown: recorded `unconfirmed`, and this pass raised the alert. */
  needsReview: number;
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
        await this.#settleOne(listed.reference, id, report);
      }
    }
  }

  async #settleOne(reference: string, id: string, report: WritesReport): Promise<void> {
    // The copy was listed at the start of the pass: a re-press or another instance may have
    // settled the write since. Decided on the charge as stored now.
    const charge = await this.#options.store.findByReference(reference);
    const entry = charge?.operationLog?.[id];
    if (charge === undefined || entry?.state !== "sent" || !hasOrder(charge)) return;
    // Recorded moments ago: its request (of this instance or another) may still be sending it.
    const { firstSentAt } = entry;
    if (firstSentAt !== undefined && this.#options.now() - Date.parse(firstSentAt) < this.#options.timeoutMs)
      return;
    const { write, bodyKnown } = writeOf(entry);
    const resend = this.#writes.mayResend(entry);
    // An entry stored before amounts were recorded cannot be sent by us: a re-press can, inside
    // its window; past it, it is settled below like any other.
    if (resend && !bodyKnown) return;
    report.examined++;
    let result: WriteResult;
    try {
      result = resend
        ? await this.#writes.send(charge, write, entry)
        : await this.#writes.answerFromLog(charge, write);
    } catch (error) {
      // A refusal of the service is recorded on the entry by the send; anything else stays unknown.
      if (OrderStateError.isInstance(error) || InvalidRequestError.isInstance(error)) report.resolved++;
      else report.stillUnknown++;
      return;
    }
    if (result.kind !== "unconfirmed") report.resolved++;
    else if (result.alerted) report.needsReview++;
  }
}

/** Writes are only ever recorded for an authorized order; a record without one has nothing to send. */
function hasOrder(charge: ChargeRecord): boolean {
  return charge.orderId !== undefined && charge.authorizationId !== undefined;
}
