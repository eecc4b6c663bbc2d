/**
 * What this client knows of the idempotency keys of its writes beyond one call: which keys' last
 * call ended with an unknown outcome, with when each was first sent, and how many calls with each
 * key are running now. A call with such a key starts from what the other may have done, and one
 * that sent nothing says "unknown" rather than "not sent" (which would invite a new key, and a second
 * charge) when another call with its key ran beside it (however that one ended) or ended unknown. Bounded: the oldest unknown
 * keys are forgotten first. Another process knows none of this: it passes `firstSentAt`.
 */
export class KeyMemory {
  readonly #firstSentAt = new Map<string, Date>();
  readonly #running = new Map<string, KeyCalls>();
  readonly #max: number;

  constructor(max = 10_000) {
    this.#max = max;
  }

  /** When `key` was first sent, if its last call here ended unknown. */
  firstSentAt(key: string): Date | undefined {
    return this.#firstSentAt.size === 0 ? undefined : this.#firstSentAt.get(key);
  }

  remember(key: string, firstSentAt: Date): void {
    this.#firstSentAt.delete(key);
    this.#firstSentAt.set(key, firstSentAt);
    if (this.#firstSentAt.size > this.#max) {
      this.#firstSentAt.delete(this.#firstSentAt.keys().next().value as string);
    }
  }

  /** The key's outcome is known now (done, or the service's definite answer about it). */
  forget(key: string): void {
    if (this.#firstSentAt.size > 0) this.#firstSentAt.delete(key);
  }

  /** A call with `key` starts; `finish` must follow, however it ends. */
  start(key: string): KeyTicket {
    let calls = this.#running.get(key);
    if (calls === undefined) {
      calls = { running: 0, starts: 0, firstSentAt: undefined };
      this.#running.set(key, calls);
    }
    calls.running++;
    calls.starts++;
    return { key, calls, othersAtStart: calls.running - 1, startsAtStart: calls.starts };
  }

  /** The ticket's call sends (or may send) its request now; the first time counts. */
  sent(ticket: KeyTicket, at: Date): void {
    const { calls } = ticket;
    if (calls.firstSentAt === undefined || at.getTime() < calls.firstSentAt.getTime()) calls.firstSentAt = at;
  }

  finish(ticket: KeyTicket): void {
    ticket.calls.running--;
    if (ticket.calls.running === 0) this.#running.delete(ticket.key);
  }

  /**
   * True when another call with the ticket's key ran at some time during this one: running when it
   * started, or started since (it may have ended already, even with a success).
   */
  overlapped(ticket: KeyTicket): boolean {
    return ticket.othersAtStart > 0 || ticket.calls.starts > ticket.startsAtStart;
  }

  /** The earliest send of the calls with the ticket's key that ran beside it (its own included). */
  firstSentBeside(ticket: KeyTicket): Date | undefined {
    return ticket.calls.firstSentAt;
  }
}

/** The calls with one key running now, and what they did while any of them ran. */
interface KeyCalls {
  running: number;
  /** Calls started with the key since one of them first ran (the count only grows). */
  starts: number;
  firstSentAt: Date | undefined;
}

/** One call's hold on its key's running calls. */
export interface KeyTicket {
  readonly key: string;
  readonly calls: KeyCalls;
  readonly othersAtStart: number;
  readonly startsAtStart: number;
}
