import { MedusaError } from "@medusajs/framework/utils";
import { formatCents, type Order, OrderStateError, toCents } from "@purchase-auth/core";
import { sumExact, toCentsRounded } from "./amounts";
import { logFieldsOf } from "./errors";
import { cancelKey, captureToKey, refundToKey, releaseKey } from "./idempotency-keys";
import { RECORDED_BY_PLUGIN } from "./payment-module-records";
import {
  dataWithOrder,
  fail,
  type ProviderContext,
  readOrder,
  requireOrder,
  stringOf,
} from "./provider-context";
import type { PurchaseAuthData } from "./session-data";
import { keepUnknownWrite, settleUnknownWrite } from "./unknown-writes";

/**
 * Manual capture up to the captured total Medusa now records. Medusa does not pass the amount: the
 * captures it recorded for the payment (this one included) are summed exactly and rounded once, so
 * partial captures of a sub-cent total add up to the total, never a cent above it. Before sending,
 * the service's order is read: only what is missing up to that total is captured, so a capture whose
 * answer was lost is not applied twice. Already captured counts as done; a cancelled or expired
 * order is an error, never "captured". Runs under the order's lock: two captures at once would
 * each read the service before the other sent, and both send the difference. While a write of the
 * order has an unknown outcome, only its retry is sent (unknown-writes.ts).
 */
export async function capture(
  context: ProviderContext,
  data: PurchaseAuthData,
  captureId: string | undefined,
): Promise<PurchaseAuthData> {
  const orderId = requireOrder(data, "Capture");
  return await context.records.withOrderLock(orderId, () => captureLocked(context, data, orderId, captureId));
}

async function captureLocked(
  context: ProviderContext,
  data: PurchaseAuthData,
  orderId: string,
  captureId: string | undefined,
): Promise<PurchaseAuthData> {
  const recorded = captureId ? await context.records.capturesOfPaymentOf(captureId) : undefined;
  const read = await readOrder(context, orderId);
  let target = toCents(read.totalAmount);
  if (recorded) {
    const recordedTotal = toCentsRounded(sumExact(recorded.amounts));
    if (recordedTotal < target) target = recordedTotal;
  }
  const key = captureToKey(context.options.idempotencyNamespace, orderId, formatCents(target));
  const sends = target > toCents(read.capturedAmount);
  const cents = recorded ? toCentsRounded(recorded.own) : undefined;
  const followed = recorded?.ownBy === RECORDED_BY_PLUGIN;
  const next = { operation: "Capture", key, sends, cents, followed } as const;
  const before = await settleUnknownWrite(context, recorded?.paymentId, read, next);
  const missing = target - toCents(before.capturedAmount);
  if (missing <= 0n) {
    context.logger?.info(
      `purchase-auth: order ${orderId} already has ${before.capturedAmount} captured; capture ${captureId} counts as done`,
    );
    return dataWithOrder(data, before);
  }
  try {
    await context.client.orders.capture(
      orderId,
      { amount: formatCents(missing), ...(captureId ? { actionReference: captureId } : {}) },
      { idempotencyKey: key },
    );
  } catch (error) {
    if (!OrderStateError.isInstance(error)) {
      const failure = fail(context, "Capture", error, { orderId });
      throw await keepUnknownWrite(context, recorded?.paymentId, error, failure, cents);
    }
    const order = await readOrder(context, orderId);
    if (toCents(order.capturedAmount) < target) {
      context.logger?.error(
        `purchase-auth: Capture failed ${JSON.stringify({ orderId, status: order.status, capturedAmount: order.capturedAmount, cancelledAmount: order.cancelledAmount, ...logFieldsOf(error) })}`,
      );
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `Capture: the order at the service cannot be captured any more (status ${order.status}, captured ${order.capturedAmount}, released ${order.cancelledAmount} of ${order.totalAmount}); nothing was captured.`,
      );
    }
  }
  const after = await readOrder(context, orderId);
  if (toCents(after.capturedAmount) < target) {
    throw new MedusaError(
      MedusaError.Types.UNEXPECTED_STATE,
      `Capture: the service reports ${after.capturedAmount} captured on order ${orderId}, less than the ${formatCents(target)} expected; check the order at the service.`,
    );
  }
  return dataWithOrder(data, after);
}

/**
 * Refunds up to the refunded total Medusa now records: the refunds it recorded for the payment (this
 * one included, `refundId` is its id) summed exactly and rounded once. The key derives from the
 * order and that total, and only what is missing up to it is sent: a refund whose answer was lost is
 * not refunded twice by Medusa's retry. Under the order's lock, as a capture: two refunds at once
 * each aimed at the same total from the payment's data, and the service refunded one of them. Without
 * an id (no record to read), the payment's data gives the total before this refund. While a write of
 * the order has an unknown outcome, only its retry is sent (unknown-writes.ts).
 */
export async function refund(
  context: ProviderContext,
  data: PurchaseAuthData,
  amount: unknown,
  refundId: string | undefined,
): Promise<PurchaseAuthData> {
  const orderId = requireOrder(data, "Refund");
  const cents = toCentsRounded(amount);
  if (cents <= 0n) throw new MedusaError(MedusaError.Types.INVALID_DATA, "A refund must be above 0.");
  return await context.records.withOrderLock(orderId, async () => {
    const recorded = refundId ? await context.records.refundsOfPaymentOf(refundId) : undefined;
    const target = recorded
      ? toCentsRounded(sumExact(recorded.amounts))
      : toCents(data.refunded_amount ?? "0.00") + cents;
    const followed = recorded?.ownBy === RECORDED_BY_PLUGIN;
    const aim = { target, refundId, paymentId: recorded?.paymentId, cents, followed };
    return await refundLocked(context, data, orderId, aim);
  });
}

/** A refund aiming at a refunded total of `target`, `cents` of its own. */
interface RefundAim {
  target: bigint;
  refundId: string | undefined;
  paymentId: string | undefined;
  cents: bigint;
  /** Recorded by the plugin following the service. */
  followed: boolean;
}

async function refundLocked(
  context: ProviderContext,
  data: PurchaseAuthData,
  orderId: string,
  { target, refundId, paymentId, cents, followed }: RefundAim,
): Promise<PurchaseAuthData> {
  const key = refundToKey(context.options.idempotencyNamespace, orderId, formatCents(target));
  const read = await readOrder(context, orderId);
  const sends = target > toCents(read.refundedAmount);
  const next = { operation: "Refund", key, sends, cents, followed } as const;
  const before = await settleUnknownWrite(context, paymentId, read, next);
  const missing = target - toCents(before.refundedAmount);
  if (missing <= 0n) {
    context.logger?.info(
      `purchase-auth: order ${orderId} already has ${before.refundedAmount} refunded; refund ${refundId} counts as done`,
    );
    return dataWithOrder(data, before);
  }
  try {
    await context.client.orders.refund(
      orderId,
      { amount: formatCents(missing), ...(refundId ? { actionReference: refundId } : {}) },
      { idempotencyKey: key },
    );
  } catch (error) {
    const failure = fail(context, "Refund", error, { orderId });
    throw await keepUnknownWrite(context, paymentId, error, failure, cents);
  }
  return dataWithOrder(data, await readOrder(context, orderId));
}

/**
 * Releases what is not captured (Medusa's cancelPayment, and the remainder of a partly captured
 * payment when its order is canceled). The order is read first: one with nothing left to release
 * counts as done, nothing sent. With `allowCaptured` false (Medusa's cancelPayment), captured money
 * is an error before anything is sent: cancelling cannot give it back, and releasing the remainder
 * would let Medusa record the payment canceled while the service holds what it captured. Under the
 * order's lock; while a write of the order has an unknown outcome, only its retry is sent, as for
 * captures and refunds.
 */
export async function releaseUncaptured(
  context: ProviderContext,
  data: PurchaseAuthData,
  release: { keyBase: string | undefined; paymentId: string | undefined },
  allowCaptured: boolean,
): Promise<PurchaseAuthData> {
  const orderId = requireOrder(data, "Cancel");
  return await context.records.withOrderLock(orderId, () =>
    releaseLocked(context, data, orderId, release, allowCaptured),
  );
}

async function releaseLocked(
  context: ProviderContext,
  data: PurchaseAuthData,
  orderId: string,
  { keyBase, paymentId }: { keyBase: string | undefined; paymentId: string | undefined },
  allowCaptured: boolean,
): Promise<PurchaseAuthData> {
  // Read first: an order with nothing left to release (a cancel whose answer was lost, the order
  // expired) is done without sending. Its key may be past the service's idempotency window by now
  // (the service refuses it), and resending it would only be refused.
  const key = keyBase ? cancelKey(context.options.idempotencyNamespace, keyBase) : undefined;
  const read = await readOrder(context, orderId);
  const sends = !nothingLeftToRelease(read) && (allowCaptured || toCents(read.capturedAmount) === 0n);
  const next = { operation: "Cancel", key, sends } as const;
  const before = await settleUnknownWrite(context, paymentId, read, next);
  if (!allowCaptured && toCents(before.capturedAmount) > 0n) {
    // Releasing the remainder would go through, and Medusa would record the payment canceled while
    // the service holds what it captured: refuse before sending anything.
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      `Cancel: the order at the service has ${before.capturedAmount} captured (status ${before.status}); it cannot be canceled, refund it instead. Nothing was released.`,
    );
  }
  if (nothingLeftToRelease(before)) {
    context.logger?.info(`purchase-auth: order ${orderId} had nothing left to cancel (${before.status})`);
    return dataWithOrder(data, before);
  }
  try {
    await context.client.orders.cancel(
      orderId,
      keyBase ? { actionReference: keyBase } : {},
      key ? { idempotencyKey: key } : {},
    );
  } catch (error) {
    if (!OrderStateError.isInstance(error)) {
      throw await keepUnknownWrite(context, paymentId, error, fail(context, "Cancel", error, { orderId }));
    }
    const order = await readOrder(context, orderId);
    const nothingLeft = nothingLeftToRelease(order);
    if (!nothingLeft || (!allowCaptured && toCents(order.capturedAmount) > 0n)) {
      context.logger?.error(
        `purchase-auth: Cancel failed ${JSON.stringify({ orderId, status: order.status, capturedAmount: order.capturedAmount, ...logFieldsOf(error) })}`,
      );
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        `Cancel: the order at the service has ${order.capturedAmount} captured (status ${order.status}); it cannot be canceled, refund it instead.`,
      );
    }
    context.logger?.info(`purchase-auth: order ${orderId} had nothing left to cancel`);
  }
  const after = await readOrder(context, orderId);
  if (!allowCaptured && toCents(after.capturedAmount) > 0n) {
    // A capture still on its way (its answer lost) ran before the cancel: the service released the
    // rest and holds what it captured. Medusa must not record the payment canceled: the service's
    // event brings the capture into Medusa, and it is refunded from there.
    context.logger?.error(
      `purchase-auth: Cancel of order ${orderId} released the rest, but a capture of ${after.capturedAmount} landed before it (status ${after.status})`,
    );
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      `Cancel: a capture of ${after.capturedAmount} reached the service before this cancel, which released the rest; the payment is not canceled. Refund the capture instead once Medusa shows it.`,
    );
  }
  return dataWithOrder(data, after);
}

/** Nothing of the order is left uncaptured and unreleased. */
function nothingLeftToRelease(order: Order): boolean {
  return toCents(order.totalAmount) - toCents(order.capturedAmount) - toCents(order.cancelledAmount) <= 0n;
}

/**
 * True when Medusa asks to cancel a payment it never recorded, whose session already has a live
 * payment holding the same service order: the payment module's rollback of a duplicate. Without a
 * cart, Medusa authorizes a session from the webhook with no lock, while the call that sent the
 * authorization (the charge workflow's) is still on its way back: both record a payment, the unique
 * index refuses the second, and its rollback cancels "its" payment at the provider, which would
 * release the order the first payment holds (Medusa showing a payment the service cancelled).
 * Medusa's own cancelPayment passes the payment's id as the key: that payment is always released;
 * the rollback passes none.
 */
export async function heldByRecordedPayment(
  context: ProviderContext,
  data: PurchaseAuthData,
  paymentId: string | undefined,
): Promise<boolean> {
  // Medusa 2.21's rollback passes no key (the payment was never created); its cancelPayment, the id.
  if (paymentId !== undefined || !data.session_id || !data.order_id) return false;
  const recorded = await context.records.livePaymentOfSession(data.session_id);
  if (!recorded || recorded.orderId !== data.order_id) return false;
  context.logger?.warn(
    `purchase-auth: payment session ${data.session_id} was authorized twice at once (the webhook's and the caller's authorization; no cart lock serializes them); Medusa keeps payment ${recorded.id}, the duplicate's rollback releases nothing and the service's order ${data.order_id} stays held by ${recorded.id}`,
  );
  return true;
}

/**
 * Gives back everything of an order: cancels what is not captured and refunds what was captured and
 * not yet refunded. Keys derive from `keyBase` (the session), so a repeat cannot refund twice. Used
 * for money Medusa never recorded: a deleted session's order, a late success of a canceled order.
 */
export async function releaseAll(
  context: ProviderContext,
  orderId: string,
  keyBase: string,
  why: string,
): Promise<Order> {
  const namespace = context.options.idempotencyNamespace;
  let order = await readOrder(context, orderId);
  try {
    if (order.status === "NotActivated" || order.status === "PartActivated") {
      await context.client.orders.cancel(
        orderId,
        { actionReference: keyBase },
        { idempotencyKey: releaseKey(namespace, "cancel", keyBase) },
      );
      order = await readOrder(context, orderId);
    }
    const toRefund = toCents(order.capturedAmount) - toCents(order.refundedAmount);
    if (toRefund > 0n) {
      await context.client.orders.refund(
        orderId,
        { amount: formatCents(toRefund), actionReference: keyBase },
        { idempotencyKey: releaseKey(namespace, "refund", keyBase) },
      );
      order = await readOrder(context, orderId);
    }
  } catch (error) {
    throw fail(context, `Releasing the order (${why})`, error, { orderId });
  }
  context.logger?.info(
    `purchase-auth: order ${orderId} of payment session ${keyBase} released, ${why} (${order.status}, refunded ${order.refundedAmount})`,
  );
  return order;
}

export { stringOf };
