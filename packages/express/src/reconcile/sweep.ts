import type { ChargeRecord, PendingCursor } from "../stores/types.js";

/** Charges read from the store at a time. */
export const BATCH = 200;

/** One page of a store's keyset-paged listing (`listPending`, `listUnanswered`). */
export type ListPage = (limit: number, after?: PendingCursor) => Promise<ChargeRecord[]>;

/**
 * A bounded walk through a paged listing that goes on, pass after pass, where the last pass
 * stopped, and starts over at its end: each pass reads at most `pagesPerPass` pages, and every
 * charge is reached within a known number of passes.
 */
export class Sweep {
  readonly #pagesPerPass: number;
  #after: PendingCursor | undefined;
  #ignoresCursor = false;

  constructor(pagesPerPass: number) {
    this.#pagesPerPass = pagesPerPass;
  }

  /**
   * True once the store answered a page after a cursor with charges it had listed already: it
   * ignores `after` (written before it existed), so later pages are never reached through it.
   */
  get ignoresCursor(): boolean {
    return this.#ignoresCursor;
  }

  /** This pass's charges, each once. */
  async next(list: ListPage): Promise<ChargeRecord[]> {
    const charges: ChargeRecord[] = [];
    // By reference, not by comparing orders here: a database orders references by its collation.
    const listed = new Set<string>();
    for (let page = 0; page < this.#pagesPerPass; page++) {
      const found = await list(BATCH, this.#after);
      const fresh = found.filter((charge) => !listed.has(charge.reference));
      for (const charge of fresh) listed.add(charge.reference);
      charges.push(...fresh);
      const last = found[found.length - 1];
      // The end of the listing, or a page with nothing new (a store written before `after` existed
      // lists its first page again): the next pass starts over.
      if (found.length < BATCH || last === undefined || fresh.length === 0) {
        if (found.length > 0 && fresh.length === 0) this.#ignoresCursor = true;
        this.#after = undefined;
        break;
      }
      this.#after = { updatedAt: last.updatedAt, reference: last.reference };
    }
    return charges;
  }
}
