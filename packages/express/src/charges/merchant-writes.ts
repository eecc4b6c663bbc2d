import {
  idempotencyKeyIn,
  NotFoundError,
  type Order,
  OrderStateError,
  type WriteOptions,
} from "@purchase-auth/core";
import { withTimeout } from "../http/timeout.js";
import type { ResolvedOptions } from "../options.js";
import { problem } from "../problems.js";
import type { PaymentAlert } from "../reconcile/alerts.js";
import type { ChargeRecord, OperationRecord } from "../stores/types.js";
import { isPastIdempotencyWindow } from "./authorizer.js";
import type { Charges } from "./charges.js";
import { InFlight } from "./in-flight.js";
import {
  hasNothingLeftToDo,
  isDefiniteRefusal,
  type MerchantWrite,
  movesAnAmount,
  operationNews,
  orderNews,
  orderShows,
  wasNotDelivered,
} from "./merchant-write.js";
import {
  lastSendOf,
  mayHaveReached,
  mayHaveReachedBefore,
  type OperationNews,
  operationId,
} from "./operation-log.js";

// Sends a merchant write (capture, cancel, refund) by its operation-log entry, for the merchant
// routes and the reconciler alike: with the entry's key and body, and only while the service's
// idempotency window lasts; past it, the log and the order answer, and a write whose outcome stayed
// unknown is given up to review (an alert, then `unconfirmed`). Never sent past the window: the
// service forgets keys, and a capture or refund sent again then would move its amount twice. Every
// send is counted on the entry before it goes out (with its time), and one that core says never
// reached the service is counted as such: a write none of whose sends can have reached it is never
// sent by the reconciler, and past the window is simply not applied.

/**
 * How a write ended, as the route answers it. answered: the order shows it (`done`), or had
 * nothing left to do (`already_done`); not_applied: the order does not show it, or no send of it
 * can have reached the service (send a new sequence); refused: the log says the service refused it;
 * unconfirmed: its outcome stayed unknown past the window (`alerted` when this call raised the
 * alert); confirming: past the window, but a send of it began less than `timeoutMs` ago (here or on
 * another instance) and may still apply it: nothing is decided yet (ask again shortly). A write the
 * service refused just now or whose outcome is unknown throws core's error instead (a refusal
 * recorded first). `order` is undefined when the write is done but its order could not be re-read
 * (the service accepted it, then failed the read): the write's outcome stands, the amounts wait.
 * A send that did nothing while an earlier send of the same write may have reached the service is
 * `confirming` too (never "nothing happened": that earlier send may have moved money).
 */
export type WriteResult =
  | { kind: "answered"; charge: ChargeRecord; order: Order | undefined; outcome: "done" | "already_done" }
  | { kind: "not_applied" | "refused" | "confirming" }
  | { kind: "unconfirmed"; alerted: boolean };

export interface MerchantWritesDeps {
  options: ResolvedOptions;
  charges: Charges;
  alert: (alert: PaymentAlert) => Promise<void>;
}

/** What the write's call returns when the service or core says its key is past its window. */
const PAST_WINDOW = Symbol("past the idempotency window");
/** What it returns when nothing may be decided yet, and the same sequence should ask again. */
const CONFIRMING = Symbol("confirming");

export class MerchantWrites {
  readonly #deps: MerchantWritesDeps;
  /** Writes being sent by this process, per charge and log entry: a re-press shares the send in flight. */
  readonly #inFlight = new InFlight<WriteResult>();

  constructor(deps: MerchantWritesDeps) {
    this.#deps = deps;
  }

  /** True while the entry's key may still be sent: inside the window the service remembers it. */
  mayResend(entry: OperationRecord): boolean {
    if (entry.state === "unconfirmed" || entry.firstSentAt === undefined) return false;
    return this.#deps.options.now() - Date.parse(entry.firstSentAt) < this.#deps.options.resendWindowMs;
  }

  /** True while this process sends the entry `id` of the charge (that send records its outcome). */
  isSending(reference: string, id: string): boolean {
    return this.#inFlight.has(slotOf(reference, id));
  }

  /**
   * The first send of `write`, whose log entry `entry` the caller has just created (that stored
   * change counts the send and its time). Records how it ended.
   */
  send(charge: ChargeRecord, write: MerchantWrite, entry: OperationRecord | undefined): Promise<WriteResult> {
    return this.#track(charge.reference, write, () =>
      this.#deliver(charge, write, entry, entry?.lastSentAt, false),
    );
  }

  /**
   * Settles `write`, whose log entry `entry` an earlier request recorded (a re-press, or the
   * reconciler): a send of it this process is making (or an answer it is working out) is joined,
   * not repeated nor decided beside; else inside the window it is sent again with its key (its
   * key may have reached the service before), and past it the log and the order answer.
   */
  resume(
    charge: ChargeRecord,
    write: MerchantWrite,
    entry: OperationRecord,
    onSend?: () => void,
  ): Promise<WriteResult> {
    return this.#track(charge.reference, write, () =>
      this.mayResend(entry)
        ? this.#resend(charge, write, onSend)
        : this.#answerFromLog(charge, write, undefined),
    );
  }

  /** The call in flight for the write's entry, or `start()`'s, kept in flight until it ends. */
  #track(reference: string, write: MerchantWrite, start: () => Promise<WriteResult>): Promise<WriteResult> {
    return this.#inFlight.join(slotOf(reference, operationId(write.operation, write.sequence)), start);
  }

  /**
   * Counts the send on the entry (and its time) before it goes out: an instance that finds the
   * entry past the window then waits `timeoutMs` after it before deciding the write was not
   * applied. An entry settled meanwhile (another instance past the window) is answered as it is.
   */
  async #resend(charge: ChargeRecord, write: MerchantWrite, onSend?: () => void): Promise<WriteResult> {
    const { options, charges } = this.#deps;
    const news: OperationNews = {
      ...operationNews(write, "sent", new Date(options.now()).toISOString()),
      sending: true,
    };
    const recorded = (await charges.apply(charge.reference, news)) ?? charge;
    const entry = recorded.operationLog?.[operationId(write.operation, write.sequence)];
    if (entry?.state !== "sent") return this.#answerFromLog(recorded, write, undefined);
    onSend?.();
    return this.#deliver(recorded, write, entry, news.at);
  }

  /**
   * Sends the write once. `sentAt` is the time recorded for this send (the entry's `lastSentAt` as
   * this send stored it; undefined only for a first send without an entry), and `again` whether it
   * follows an earlier send of the same entry.
   */
  async #deliver(
    charge: ChargeRecord,
    write: MerchantWrite,
    entry: OperationRecord | undefined,
    sentAt: string | undefined,
    again = true,
  ): Promise<WriteResult> {
    const { options, charges } = this.#deps;
    const { operation, sequence, amount } = write;
    const orderId = charge.orderId!;
    const idempotencyKey = idempotencyKeyIn(
      options.idempotencyNamespace,
      charge.reference,
      operation,
      charge.attempt,
      sequence,
    );
    // One timeout for the write and the read after it; its timer is cleared once they are done. It
    // runs from `sentAt`, the time stored for this send before it (as lastSentAt), not from now:
    // that stored change took some time, and other instances decide nothing until `timeoutMs`
    // after lastSentAt on the promise that every send has ended by then. A store write that took
    // the whole timeout leaves none: the send is aborted before it goes out (core: not_sent).
    const elapsed = sentAt === undefined ? 0 : Math.max(0, options.now() - Date.parse(sentAt));
    const result = await withTimeout(Math.max(0, options.timeoutMs - elapsed), async (signal) => {
      const sendOptions: WriteOptions = { idempotencyKey, signal };
      // Told when the key was first sent, core never sends it past the window by its own clock: the
      // entry's age on the router's clock (`now`, which tests move), as a time on the client's.
      // Only when an earlier send may have reached the service: else core, unable to rule out that
      // the key was stored, answers a send that never left `unknown`, and a write whose sends all
      // did nothing would pass for one that may have moved money. The window is ours to keep
      // (mayResend) either way.
      if (again && entry?.firstSentAt !== undefined && mayHaveReachedBefore(entry)) {
        const age = Math.max(0, options.now() - Date.parse(entry.firstSentAt));
        sendOptions.firstSentAt = new Date(Date.now() - age);
      }
      try {
        const { orders } = options.client;
        if (operation === "capture") {
          await orders.capture(orderId, amount === undefined ? {} : { amount }, sendOptions);
        } else if (operation === "cancel") {
          await orders.cancel(orderId, {}, sendOptions);
        } else {
          await orders.refund(orderId, { amount: amount! }, sendOptions);
        }
      } catch (error) {
        // Core says this send cannot have reached the service, or that nothing was done under its
        // key: counted (a refusal is also recorded below), so that a write none of whose sends can
        // have reached the service is never sent by the reconciler. (Only the write's own error: a
        // failed read after it says nothing about its delivery.)
        if (wasNotDelivered(error)) {
          const news = { ...operationNews(write, "sent"), notDelivered: true } as const;
          const after = await charges.apply(charge.reference, news);
          // This send did nothing, but an earlier one may have moved money: never answer "nothing
          // happened" (the merchant would press a new sequence); the same sequence settles it.
          const now = after?.operationLog?.[operationId(operation, sequence)];
          if (now?.state === "sent" && mayHaveReached(now)) return CONFIRMING;
        }
        // The service (or core, by its own clock) says the key is past its window: unknowable now.
        if (isPastIdempotencyWindow(error)) return PAST_WINDOW;
        if (!OrderStateError.isInstance(error) || error.reason !== "INVALID_ORDER_STATE") {
          // A definite refusal is stored by the service under this key: recorded, so the next
          // operation takes the next number and is not blocked by it.
          if (isDefiniteRefusal(error)) {
            await charges.apply(charge.reference, operationNews(write, "refused"));
          }
          throw error;
        }
        // Refused under this key: nothing moved. A write with an amount is refused whatever the
        // order says; one without is done if the order has nothing left to do, which only a read
        // tells (failed: the same sequence asks again, so never "nothing happened").
        const order = await this.#readOrNothing(orderId, signal);
        if (order === undefined && !movesAnAmount(write)) return CONFIRMING;
        if (order === undefined || !hasNothingLeftToDo(operation, amount, order)) {
          const news = order === undefined ? [] : [orderNews(charge.authorizationId!, order)];
          await charges.apply(charge.reference, operationNews(write, "refused"), ...news);
          throw error;
        }
        return { order, outcome: "already_done" as const };
      }
      // The service's amounts are the truth; the write's answer carries none (supplement A). Read
      // outside the catch: a failed read says nothing about the write, which the service accepted.
      return { order: await this.#readOrNothing(orderId, signal), outcome: "done" as const };
    });
    if (result === CONFIRMING) return { kind: "confirming" };
    if (result === PAST_WINDOW) {
      // What the log knows now (another request may have learnt the answer meanwhile).
      const current = (await options.store.findByReference(charge.reference)) ?? charge;
      return this.#answerFromLog(current, write, sentAt);
    }
    const { order, outcome } = result;
    if (order === undefined) {
      // Accepted, and its order unread. A write with an amount moved it under its own key: done (the
      // merchant must never be told nothing happened). One without is done only if the order shows
      // it (below): until a read does, the same sequence asks again.
      if (!movesAnAmount(write)) return { kind: "confirming" };
      const updated = await charges.apply(charge.reference, operationNews(write, "done"));
      return { kind: "answered", charge: updated ?? charge, order, outcome };
    }
    if (!orderShows(operation, amount, order)) {
      // The key answered, but the order does not show the write (the answer of another body under
      // this key): never "done" when the money did not move.
      await charges.apply(charge.reference, orderNews(charge.authorizationId!, order));
      return { kind: "not_applied" } as const;
    }
    const updated = await charges.apply(
      charge.reference,
      operationNews(write, "done"),
      orderNews(charge.authorizationId!, order),
    );
    return { kind: "answered", charge: updated ?? charge, order, outcome } as const;
  }

  /**
   * Answers a write whose key may no longer be sent, from what the operation log and the order
   * know. A write without an amount (capture of the rest, cancel) is told by the order: done when
   * nothing is left to do, else not applied (recorded refused: its key is never sent again). A
   * write with an amount: done or refused as recorded; otherwise unknown for good: recorded
   * unconfirmed, never sent again, and an alert (raised before it is recorded, so a crash repeats
   * it rather than loses it). A write none of whose sends can have reached the service is not
   * applied (recorded refused, no alert). Nothing is decided while a send of it may still be on its
   * way (begun less than `timeoutMs` ago, but for `endedSend`, the one the caller made): confirming.
   */
  async #answerFromLog(
    charge: ChargeRecord,
    write: MerchantWrite,
    endedSend: string | undefined,
  ): Promise<WriteResult> {
    const { options, charges } = this.#deps;
    const { operation, sequence, amount } = write;
    const entry = charge.operationLog?.[operationId(operation, sequence)];
    if (entry?.state === "sent") {
      if (!mayHaveReached(entry)) {
        await charges.apply(charge.reference, operationNews(write, "refused"));
        return { kind: "not_applied" };
      }
      const sending = entry.lastSentAt !== endedSend || endedSend === undefined;
      if (sending && options.now() - lastSendOf(entry, charge) < options.timeoutMs)
        return { kind: "confirming" };
    }
    if (!movesAnAmount(write) || entry?.state === "done") {
      const order = await withTimeout(options.timeoutMs, (signal) =>
        this.#readOrNothing(charge.orderId!, signal),
      );
      // Done stays done without the order; a write the order must tell waits for a read.
      if (order === undefined) {
        if (entry?.state === "done") return { kind: "answered", charge, order, outcome: "done" };
        return { kind: "confirming" };
      }
      const news = orderNews(charge.authorizationId!, order);
      if (entry?.state === "done") {
        const updated = await charges.apply(charge.reference, news);
        return { kind: "answered", charge: updated ?? charge, order, outcome: "done" };
      }
      if (!hasNothingLeftToDo(operation, amount, order)) {
        // Past the window its key is never sent again: under it, nothing will ever move.
        await charges.apply(charge.reference, operationNews(write, "refused"), news);
        return { kind: "not_applied" };
      }
      const updated = await charges.apply(charge.reference, operationNews(write, "done"), news);
      return { kind: "answered", charge: updated ?? charge, order, outcome: "already_done" };
    }
    if (entry?.state === "refused") return { kind: "refused" };
    if (entry?.state === "unconfirmed") return { kind: "unconfirmed", alerted: false };
    await this.#deps.alert({
      kind: "needs_review",
      reference: charge.reference,
      authorizationId: charge.authorizationId!,
      orderId: charge.orderId!,
      message: `the outcome of ${operation} ${sequence} stayed unknown past the service's idempotency window, so its key is never sent again; compare the order's amounts at the service with your back office before another ${operation}`,
    });
    const after = await charges.apply(charge.reference, operationNews(write, "unconfirmed"));
    // A send made inside the window may have learnt the answer meanwhile: that answer stands.
    const settled = after?.operationLog?.[operationId(operation, sequence)]?.state;
    if (settled === "done" || settled === "refused") return this.#answerFromLog(after!, write, undefined);
    return { kind: "unconfirmed", alerted: true };
  }

  /**
   * The order, or undefined when it cannot be read now (the service unavailable, the time out):
   * for a read after a write, whose failure must never be answered as if the write did nothing.
   */
  async #readOrNothing(orderId: string, signal: AbortSignal): Promise<Order | undefined> {
    try {
      return await this.readOrder(orderId, signal);
    } catch {
      return undefined;
    }
  }

  async readOrder(orderId: string, signal: AbortSignal): Promise<Order> {
    try {
      return await this.#deps.options.client.orders.get(orderId, { signal });
    } catch (error) {
      if (!NotFoundError.isInstance(error)) throw error;
      throw problem(
        "not-found",
        404,
        "Order not found",
        "The payment's order could not be found at the service.",
      );
    }
  }
}

export {
  type MerchantWrite,
  operationFingerprint,
  operationNews,
  orderNews,
  writeOf,
} from "./merchant-write.js";

/** The in-process key of one log entry of one charge. */
function slotOf(reference: string, id: string): string {
  return `${reference}\u0000${id}`;
}
