import { type CaptureMode, formatCents, type Order, type OrderStatus } from "@purchase-auth/core";
import { FifoMap } from "../core/bounded.js";
import { type StoredTime, toEpochMs } from "../core/stored-time.js";
import { appended, type CompactList } from "./compact-list.js";
import { type ItemsText, itemsFromText } from "./items-text.js";

/** A write applied to an order, kept for assertions (`orders()` in the control surface). */
export interface OrderOperation {
  readonly type: "capture" | "cancel" | "refund" | "expire";
  readonly amount: string;
  readonly at: string;
  readonly actionReference?: string;
  readonly description?: string;
}

/** Operations kept per order (the latest); enough for any test, bounded for any run. */
const MAX_OPERATIONS = 100;

export interface OrderRecord {
  readonly orderId: string;
  readonly authorizationId: string;
  readonly merchantId: string;
  readonly customerToken: string;
  readonly storeId: string;
  readonly reference: string | undefined;
  readonly currency: string;
  readonly captureMode: CaptureMode;
  readonly items: ItemsText;
  readonly createdAt: StoredTime;
  readonly totalCents: bigint;
  capturedCents: bigint;
  refundedCents: bigint;
  /** Released without capture: by cancel, or by expiry. */
  cancelledCents: bigint;
  /** The remainder was released by expiry rather than by a cancel call. */
  expired: boolean;
  operations: CompactList<OrderOperation>;
}

/** What is still authorized and neither captured nor released. */
export function uncapturedCents(order: OrderRecord): bigint {
  // The total itself while nothing is captured or released: no new BigInt for a capture to keep.
  if (order.capturedCents === 0n && order.cancelledCents === 0n) return order.totalCents;
  return order.totalCents - order.capturedCents - order.cancelledCents;
}

/**
 * The status follows from the amounts, so no transition can leave it inconsistent:
 * - something still capturable: NotActivated (nothing captured yet) or PartActivated;
 * - nothing capturable and nothing captured: Cancelled (released by cancel) or Expired (by expiry);
 * - nothing capturable, something captured: Activated, PartReturned (part refunded) or Returned
 *   (all captured money refunded).
 * Refunds of an order that is still PartActivated are allowed and show once capturing has ended.
 */
export function orderStatus(order: OrderRecord): OrderStatus {
  const remainder = uncapturedCents(order);
  if (remainder > 0n) return order.capturedCents === 0n ? "NotActivated" : "PartActivated";
  if (order.capturedCents === 0n) return order.expired ? "Expired" : "Cancelled";
  if (order.refundedCents === 0n) return "Activated";
  return order.refundedCents < order.capturedCents ? "PartReturned" : "Returned";
}

export type OrderWriteResult =
  | { ok: true; amountCents: bigint }
  | { ok: false; reason: "INVALID_ORDER_STATE" | "AMOUNT_EXCEEDS_REMAINING" };

interface WriteDetails {
  at: string;
  actionReference?: string | undefined;
  description?: string | undefined;
}

/** Captures `amountCents`, or the whole uncaptured remainder when undefined. */
export function captureOrder(
  order: OrderRecord,
  amountCents: bigint | undefined,
  details: WriteDetails,
): OrderWriteResult {
  if (!isCapturable(order)) return { ok: false, reason: "INVALID_ORDER_STATE" };
  const remainder = uncapturedCents(order);
  const amount = amountCents ?? remainder;
  if (amount > remainder) return { ok: false, reason: "AMOUNT_EXCEEDS_REMAINING" };
  // 0n + amount would be a new BigInt equal to `amount`, kept as long as the order: share it instead.
  order.capturedCents = order.capturedCents === 0n ? amount : order.capturedCents + amount;
  record(order, "capture", amount, details);
  return { ok: true, amountCents: amount };
}

/** Releases the uncaptured remainder; what was captured stays captured. */
export function cancelOrder(order: OrderRecord, details: WriteDetails): OrderWriteResult {
  if (!isCapturable(order)) return { ok: false, reason: "INVALID_ORDER_STATE" };
  const amount = uncapturedCents(order);
  order.cancelledCents += amount;
  record(order, "cancel", amount, details);
  return { ok: true, amountCents: amount };
}

/** Refunds captured money. Nothing captured, or everything refunded already, is a state error. */
export function refundOrder(
  order: OrderRecord,
  amountCents: bigint,
  details: WriteDetails,
): OrderWriteResult {
  const refundable = order.capturedCents - order.refundedCents;
  if (refundable <= 0n) return { ok: false, reason: "INVALID_ORDER_STATE" };
  if (amountCents > refundable) return { ok: false, reason: "AMOUNT_EXCEEDS_REMAINING" };
  order.refundedCents += amountCents;
  record(order, "refund", amountCents, details);
  return { ok: true, amountCents };
}

/** The authorization lapses: the uncaptured remainder is released. Returns what was released. */
export function expireOrder(order: OrderRecord, at: string): bigint {
  const amount = uncapturedCents(order);
  if (amount <= 0n) return 0n;
  order.cancelledCents += amount;
  order.expired = true;
  record(order, "expire", amount, { at });
  return amount;
}

/** The Order resource of supplement A. */
export function toOrderResource(order: OrderRecord): Order {
  return {
    orderId: order.orderId,
    authorizationId: order.authorizationId,
    customerToken: order.customerToken,
    storeId: order.storeId,
    ...(order.reference === undefined ? {} : { reference: order.reference }),
    currency: order.currency,
    status: orderStatus(order),
    totalAmount: formatCents(order.totalCents),
    capturedAmount: formatCents(order.capturedCents),
    refundedAmount: formatCents(order.refundedCents),
    cancelledAmount: formatCents(order.cancelledCents),
    captureMode: order.captureMode,
    createdAt: new Date(toEpochMs(order.createdAt)).toISOString(),
    items: itemsFromText(order.items),
  };
}

function isCapturable(order: OrderRecord): boolean {
  const status = orderStatus(order);
  return status === "NotActivated" || status === "PartActivated";
}

function record(
  order: OrderRecord,
  type: OrderOperation["type"],
  amountCents: bigint,
  details: WriteDetails,
): void {
  const amount = formatCents(amountCents);
  const { at, actionReference, description } = details;
  // The same keys in the same order as a literal with optional spreads, without the copies.
  const operation: OrderOperation =
    actionReference === undefined && description === undefined
      ? { type, amount, at }
      : {
          type,
          amount,
          at,
          ...(actionReference === undefined ? {} : { actionReference }),
          ...(description === undefined ? {} : { description }),
        };
  order.operations = appended(order.operations, operation, MAX_OPERATIONS);
}

/**
 * Orders by id, the oldest forgotten beyond `maxStoredObjects`.
 *
 * Manual-capture orders also wait in an expiry queue. All orders live equally long and are created
 * in time order, so the queue's front is always the next to expire: one scheduler job at a time
 * serves the whole queue, however many orders wait.
 */
export class OrderStore {
  readonly #orders = new FifoMap<string, OrderRecord>();
  readonly #awaitingExpiry = new FifoMap<string, OrderRecord>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  add(order: OrderRecord): OrderRecord {
    this.#orders.add(order.orderId, order); // a fresh GUID
    this.#orders.evictBeyond(this.#max, this.#forgetExpiry);
    return order;
  }

  /** One callback for every eviction (no closure per order): a forgotten order expires no more. */
  readonly #forgetExpiry = (evicted: OrderRecord): void => {
    this.#awaitingExpiry.delete(evicted.orderId);
  };

  get(orderId: string): OrderRecord | undefined {
    return this.#orders.get(orderId.toLowerCase());
  }

  /** The order only when `merchantId` owns it: another merchant's order is "not found". */
  owned(orderId: string, merchantId: string): OrderRecord | undefined {
    const order = this.get(orderId);
    return order?.merchantId === merchantId ? order : undefined;
  }

  list(): OrderRecord[] {
    return [...this.#orders.values()];
  }

  /** Queues an order whose uncaptured remainder lapses some time after its creation. */
  awaitExpiry(order: OrderRecord): void {
    this.#awaitingExpiry.set(order.orderId, order);
  }

  /** The queued order created first, i.e. the next to expire. */
  nextToExpire(): OrderRecord | undefined {
    return this.#awaitingExpiry.oldest();
  }

  /** Removes and returns the queued orders created at or before `createdBy` (epoch ms). */
  takeExpiring(createdBy: number): OrderRecord[] {
    const due: OrderRecord[] = [];
    this.#awaitingExpiry.walkFromOldest((order) => {
      if (toEpochMs(order.createdAt) > createdBy) return false;
      this.#awaitingExpiry.delete(order.orderId);
      due.push(order);
      return true;
    });
    return due;
  }

  clear(): void {
    this.#orders.clear();
    this.#awaitingExpiry.clear();
  }
}
