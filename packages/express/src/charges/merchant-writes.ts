import { createHash } from "node:crypto";
import {
  InvalidRequestError,
  idempotencyKeyIn,
  NotFoundError,
  type Order,
  OrderStateError,
  type OrderStatus,
  PurchaseAuthError,
  type WriteOptions,
} from "@purchase-auth/core";
import { withTimeout } from "../http/timeout.js";
import type { ResolvedOptions } from "../options.js";
import { problem } from "../problems.js";
import type { PaymentAlert } from "../reconcile/alerts.js";
import type { ChargeRecord, MerchantOperation, OperationRecord } from "../stores/types.js";
import { isPastIdempotencyWindow } from "./authorizer.js";
import type { Charges } from "./charges.js";
import { lastSendOf, mayHaveReached, type OperationNews, operationId } from "./operation-log.js";

// Sends a merchant write (capture, cancel, refund) by its operation-log entry, for the merchant
// routes and the reconciler alike: with the entry's key and body, and only while the service's
// idempotency window lasts; past it, the log and the order answer, and a write whose outcome stayed
// unknown is given up to review (an alert, then `unconfirmed`). Never sent past the window: the
// service forgets keys, and a capture or refund sent again then would move its amount twice. Every
// send is counted on the entry before it goes out (with its time), and one that core says never
// reached the service is counted as such: a write none of whose sends can have reached it is never
// sent by the reconciler, and past the window is simply not applied.

/** One write as its log entry names it: operation, sequence, what it moves. */
export interface MerchantWrite {
  operation: MerchantOperation;
  sequence: number | string;
  fingerprint: string;
  /** The amount of a partial capture or a refund; undefined for a capture of the rest and a cancel. */
  amount: string | undefined;
}

/**
 * How a write ended, as the route answers it. answered: the order shows it (`done`), or had
 * nothing left to do (`already_done`); not_applied: the order does not show it, or no send of it
 * can have reached the service (send a new sequence); refused: the log says the service refused it;
 * unconfirmed: its outcome stayed unknown past the window (`alerted` when this call raised the
 * alert); confirming: past the window, but a send of it began less than `timeoutMs` ago (here or on
 * another instance) and may still apply it: nothing is decided yet (ask again shortly). A write the
 * service refused just now or whose outcome is unknown throws core's error instead (a refusal
 * recorded first).
 */
export type WriteResult =
  | { kind: "answered"; charge: ChargeRecord; order: Order; outcome: "done" | "already_done" }
  | { kind: "not_applied" | "refused" | "confirming" }
  | { kind: "unconfirmed"; alerted: boolean };

export interface MerchantWritesDeps {
  options: ResolvedOptions;
  charges: Charges;
  alert: (alert: PaymentAlert) => Promise<void>;
}

/**
 * Order statuses in which a write that names no amount (capture the rest, cancel) has nothing left
 * to do, so a retry that finds them succeeded. A write with an amount (a partial capture, a refund)
 * never does: its own key would replay its success, so a refusal means it moved nothing.
 */
const ALREADY_DONE: Record<"capture" | "cancel", ReadonlyArray<OrderStatus>> = {
  capture: ["Activated", "PartReturned", "Returned"],
  cancel: ["Cancelled", "Expired", "Activated", "PartReturned", "Returned"],
};

/** What the write's call returns when the service or core says its key is past its window. */
const PAST_WINDOW = Symbol("past the idempotency window");

export class MerchantWrites {
  readonly #deps: MerchantWritesDeps;
  /** Writes being sent by this process, per charge and log entry: a re-press shares the send in flight. */
  readonly #inFlight = new Map<string, Promise<WriteResult>>();

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
    return this.#track(charge.reference, write, () => this.#deliver(charge, write, entry, false));
  }

  /**
   * Settles `write`, whose log entry `entry` an earlier request recorded (a re-press, or the
   * reconciler): a send of it this process is making (or an answer it is working out) is joined,
   * not repeated nor decided beside; else inside the window it is sent again with its key (its
   * key may have reached the service before), and past it the log and the order answer.
   */
  resume(charge: ChargeRecord, write: MerchantWrite, entry: OperationRecord): Promise<WriteResult> {
    return this.#track(charge.reference, write, () =>
      this.mayResend(entry) ? this.#resend(charge, write) : this.#answerFromLog(charge, write, undefined),
    );
  }

  /** The call in flight for the write's entry, or `start()`'s, kept in flight until it ends. */
  #track(reference: string, write: MerchantWrite, start: () => Promise<WriteResult>): Promise<WriteResult> {
    const slot = slotOf(reference, operationId(write.operation, write.sequence));
    let call = this.#inFlight.get(slot);
    if (!call) {
      call = start().finally(() => this.#inFlight.delete(slot));
      this.#inFlight.set(slot, call);
    }
    return call;
  }

  /**
   * Counts the send on the entry (and its time) before it goes out: an instance that finds the
   * entry past the window then waits `timeoutMs` after it before deciding the write was not
   * applied. An entry settled meanwhile (another instance past the window) is answered as it is.
   */
  async #resend(charge: ChargeRecord, write: MerchantWrite): Promise<WriteResult> {
    const { options, charges } = this.#deps;
    const news: OperationNews = {
      ...operationNews(write, "sent", new Date(options.now()).toISOString()),
      sending: true,
    };
    const recorded = (await charges.apply(charge.reference, news)) ?? charge;
    const entry = recorded.operationLog?.[operationId(write.operation, write.sequence)];
    if (entry?.state !== "sent") return this.#answerFromLog(recorded, write, undefined);
    return this.#deliver(recorded, write, entry, true);
  }

  async #deliver(
    charge: ChargeRecord,
    write: MerchantWrite,
    entry: OperationRecord | undefined,
    again: boolean,
  ) {
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
    // One timeout for the write and the read after it; its timer is cleared once they are done.
    const result = await withTimeout(options.timeoutMs, async (signal) => {
      const sendOptions: WriteOptions = { idempotencyKey, signal };
      // Told when the key was first sent, core never sends it past the window by its own clock: the
      // entry's age on the router's clock (`now`, which tests move), as a time on the client's.
      if (again && entry?.firstSentAt !== undefined) {
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
          await charges.apply(charge.reference, { ...operationNews(write, "sent"), notDelivered: true });
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
        const order = await this.readOrder(orderId, signal);
        if (!hasNothingLeftToDo(operation, amount, order)) {
          await charges.apply(
            charge.reference,
            operationNews(write, "refused"),
            orderNews(charge.authorizationId!, order),
          );
          throw error;
        }
        return { order, outcome: "already_done" as const };
      }
      // The service's amounts are the truth; the write's answer carries none (supplement A). Read
      // outside the catch: a failed read says nothing about the write.
      return { order: await this.readOrder(orderId, signal), outcome: "done" as const };
    });
    if (result === PAST_WINDOW) {
      // What the log knows now (another request may have learnt the answer meanwhile).
      const current = (await options.store.findByReference(charge.reference)) ?? charge;
      return this.#answerFromLog(current, write, entry?.lastSentAt);
    }
    const { order, outcome } = result;
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
      const order = await withTimeout(options.timeoutMs, (signal) => this.readOrder(charge.orderId!, signal));
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

/**
 * The write a log entry names, and whether its body is known: not for an entry with an amount
 * stored before amounts were recorded (only its fingerprint tells what it moves). Such a write is
 * never sent by the reconciler, only settled once its window has passed.
 */
export function writeOf(entry: OperationRecord): { write: MerchantWrite; bodyKnown: boolean } {
  const { operation, sequence, fingerprint, amount } = entry;
  const bodyKnown = operationFingerprint(operation, amount) === fingerprint;
  return { write: { operation, sequence, fingerprint, amount }, bodyKnown };
}

/** A partial capture or a refund (by its amount, or its fingerprint): sent twice, it would move its amount twice. */
function movesAnAmount(write: MerchantWrite): boolean {
  if (write.amount !== undefined || write.operation === "refund") return true;
  return write.fingerprint !== operationFingerprint(write.operation, undefined);
}

/** What one write moves: the same sequence with another fingerprint is another write. */
export function operationFingerprint(operation: MerchantOperation, amount: string | undefined): string {
  return createHash("sha256")
    .update(`${operation}|${amount ?? "all"}`)
    .digest("hex");
}

/** The news that records `write` in the log in `state`; `at` (its first send) only when it is recorded first. */
export function operationNews(
  write: MerchantWrite,
  state: OperationRecord["state"],
  at?: string,
): OperationNews {
  const { operation, sequence, fingerprint, amount } = write;
  const news: OperationNews = { kind: "operation", operation, sequence, fingerprint, state };
  if (at !== undefined) news.at = at;
  if (amount !== undefined) news.amount = amount;
  return news;
}

/** True when the order shows that the write `operation` (with `amount` or without) has nothing left to do. */
function hasNothingLeftToDo(operation: MerchantOperation, amount: string | undefined, order: Order): boolean {
  if (amount !== undefined || operation === "refund") return false;
  return ALREADY_DONE[operation].includes(order.status);
}

/**
 * Whether the service's order shows the write: everything captured after "capture the rest",
 * nothing left reserved after a cancel. A partial capture or a refund answered 202 under its own
 * key moved its amount (a key never carries another body: the sequence is reserved first).
 */
function orderShows(operation: MerchantOperation, amount: string | undefined, order: Order): boolean {
  if (operation === "refund" || amount !== undefined) return true;
  return hasNothingLeftToDo(operation, amount, order);
}

/**
 * Core's outcome `not_sent` or `refused` for a write whose entry stays `sent` (a refusal of the
 * order's state or of the request is recorded on the entry instead): nothing done by this send.
 */
function wasNotDelivered(error: unknown): boolean {
  if (OrderStateError.isInstance(error) || InvalidRequestError.isInstance(error)) return false;
  return PurchaseAuthError.isInstance(error) && error.outcome !== "unknown";
}

/** The service answered, and refused: nothing moved, and the key now holds that refusal. */
function isDefiniteRefusal(error: unknown): boolean {
  return OrderStateError.isInstance(error) || InvalidRequestError.isInstance(error);
}

export function orderNews(authorizationId: string, order: Order) {
  return { kind: "order", authorizationId, orderId: order.orderId, orderStatus: order.status } as const;
}

/** The in-process key of one log entry of one charge. */
function slotOf(reference: string, id: string): string {
  return `${reference}\u0000${id}`;
}
