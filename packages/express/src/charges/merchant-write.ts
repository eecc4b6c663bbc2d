import { createHash } from "node:crypto";
import {
  InvalidRequestError,
  type Order,
  OrderStateError,
  type OrderStatus,
  PurchaseAuthError,
} from "@purchase-auth/core";
import type { MerchantOperation, OperationRecord } from "../stores/types.js";
import type { OperationNews } from "./operation-log.js";

// What a merchant write is and what its answers mean, apart from how it is sent (merchant-writes.ts).

/** One write as its log entry names it: operation, sequence, what it moves. */
export interface MerchantWrite {
  operation: MerchantOperation;
  sequence: number | string;
  fingerprint: string;
  /** The amount of a partial capture or a refund; undefined for a capture of the rest and a cancel. */
  amount: string | undefined;
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
export function movesAnAmount(write: MerchantWrite): boolean {
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
export function hasNothingLeftToDo(
  operation: MerchantOperation,
  amount: string | undefined,
  order: Order,
): boolean {
  if (amount !== undefined || operation === "refund") return false;
  return ALREADY_DONE[operation].includes(order.status);
}

/**
 * Whether the service's order shows the write: everything captured after "capture the rest",
 * nothing left reserved after a cancel. A partial capture or a refund answered 202 under its own
 * key moved its amount (a key never carries another body: the sequence is reserved first).
 */
export function orderShows(operation: MerchantOperation, amount: string | undefined, order: Order): boolean {
  if (operation === "refund" || amount !== undefined) return true;
  return hasNothingLeftToDo(operation, amount, order);
}

/**
 * Core's outcome `not_sent` or `refused` for a write whose entry stays `sent` (a refusal of the
 * order's state or of the request is recorded on the entry instead): nothing done by this send.
 */
export function wasNotDelivered(error: unknown): boolean {
  return !isDefiniteRefusal(error) && PurchaseAuthError.isInstance(error) && error.outcome !== "unknown";
}

/** The service answered, and refused: nothing moved, and the key now holds that refusal. */
export function isDefiniteRefusal(error: unknown): boolean {
  return OrderStateError.isInstance(error) || InvalidRequestError.isInstance(error);
}

export function orderNews(authorizationId: string, order: Order) {
  return { kind: "order", authorizationId, orderId: order.orderId, orderStatus: order.status } as const;
}
