import { MedusaError } from "@medusajs/framework/utils";
import {
  IdempotencyWindowPassedError,
  type Order,
  OutcomeUnknownError,
  outcomeOf,
  toCents,
  type UnknownWrite,
  ValidationError,
} from "@purchase-auth/core";
import { logFieldsOf, toMedusaError } from "./errors";
import { type ProviderContext, readOrder } from "./provider-context";

// A capture, refund or cancel whose answer did not come may still be run by the service after the
// provider gave up (it runs what it took; only the answer is late), or may never have reached it.
// Medusa removes its row and the admin tries again, or asks for something else. Another write that
// read the order before the first one was run would send its whole difference, and the service would
// move both; resending the first one before another would run money Medusa shows as failed. So the
// write is kept on its payment, exactly as sent (core's `error.write`), and the next write of the
// order, under the order's lock, either is the same request (the same key: the admin's retry), which
// settles it with that key, or is refused with nothing sent until the kept write can no longer run:
// its key's hour has passed, or nothing is left of the order for it to move.
//
// The write lives in the payment's metadata: Medusa rewrites the payment's data after each capture,
// refund and cancel (with what the provider returned, read before the lock), which could drop it;
// it never rewrites metadata.

/**
 * How long a kept write may still be run or answered by the service: its key's hour, less core's
 * safety margin (5 minutes). Past it, whatever it did shows in the service's order.
 */
export const KEPT_WRITE_WINDOW_MS = 55 * 60_000;

/**
 * Keeps the write of a call that failed with an unknown outcome on payment `paymentId`, for the next
 * write of its order to settle. Any other error keeps nothing: the service did not take that call.
 */
export async function keepUnknownWrite(
  context: ProviderContext,
  paymentId: string | undefined,
  error: unknown,
): Promise<void> {
  if (paymentId === undefined || !OutcomeUnknownError.isInstance(error)) return;
  try {
    await context.records.keepUnknownWrite(paymentId, error.write);
  } catch (failure) {
    // The caller's own error says what happened to its write; this one must not replace it.
    context.logger?.error(
      `purchase-auth: keeping the write of unknown outcome on payment ${paymentId} failed (${(failure as Error).message}); the next write of its order will not wait for it`,
    );
  }
}

/**
 * Settles the write kept on payment `paymentId` (if any) before the caller's write of `key` is sent
 * for its order. The same request (same key) is sent again, and the order it leaves is returned, read
 * anew. Another write that `sends` something is refused (a MedusaError, nothing sent) while the kept
 * one may still run; once it cannot, the kept write is dropped and `order` returned as it is. One
 * that sends nothing (its total reached already: a follow of the service's figures) goes on.
 */
export async function settleUnknownWrite(
  context: ProviderContext,
  paymentId: string | undefined,
  order: Order,
  request: { operation: string; key: string | undefined; sends: boolean },
): Promise<Order> {
  const { operation, key, sends } = request;
  if (paymentId === undefined) return order;
  const write = (await context.records.unknownWriteOf(paymentId)) as UnknownWrite | undefined;
  if (write === undefined) return order;
  const earlier = write.operation.replace(/^orders\./, "");
  const label = { paymentId, earlier: write.operation, firstSentAt: write.firstSentAt };
  if (cannotMoveMoney(write, order)) {
    // Whatever became of it, nothing is left for it to do: no resend, which the service might not
    // answer now (an order cancelled while it is unreachable is still released).
    context.logger?.info(
      `purchase-auth: earlier write can no longer move money (${order.status}); dropped without sending ${JSON.stringify(label)}`,
    );
    await context.records.forgetUnknownWrite(paymentId, write);
    return order;
  }
  if (write.idempotencyKey !== key) {
    if (!sends) return order;
    if (!pastItsWindow(write)) throw notARetry(operation, earlier, write);
    context.logger?.info(
      `purchase-auth: earlier write is past the service's idempotency hour; its effect, if any, shows in the order ${JSON.stringify(label)}`,
    );
    await context.records.forgetUnknownWrite(paymentId, write);
    return order;
  }
  try {
    await context.client.resendUnknownWrite(write);
    context.logger?.info(`purchase-auth: earlier write settled by its retry ${JSON.stringify(label)}`);
  } catch (error) {
    if (IdempotencyWindowPassedError.isInstance(error) && !datedAhead(write)) {
      // Past its hour, by core's clock or the service's answer: the service finished with it long
      // since, and its order shows it.
      context.logger?.info(
        `purchase-auth: earlier write is past the service's idempotency hour; its effect, if any, shows in the order ${JSON.stringify(label)}`,
      );
    } else if (ValidationError.isInstance(error)) {
      // Not a write core ever handed out (edited by hand): nothing can be resent; say so loudly.
      context.logger?.error(
        `purchase-auth: the earlier write kept on the payment cannot be read and is dropped; check the order at the service ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
    } else if (outcomeOf(error) === "refused" && !IdempotencyWindowPassedError.isInstance(error)) {
      context.logger?.info(
        `purchase-auth: earlier write was refused by the service ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
    } else {
      // Still no answer (or a first send dated ahead of this clock: another instance's clock).
      context.logger?.warn(
        `purchase-auth: settling an earlier ${earlier} before ${operation} failed ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
      // A write that sends nothing (a follow of figures the service shows) goes on; the kept one stays.
      if (!sends) return order;
      // Nothing was sent for the caller's write, and its error (Medusa logs it) says why.
      const failure = toMedusaError(`Settling an earlier ${earlier}`, error);
      throw new MedusaError(
        MedusaError.Types.UNEXPECTED_STATE,
        `${operation}: an earlier ${earlier} of this order (sent ${write.firstSentAt}) has no answer from the service yet; nothing was sent for this one. Try again in a minute. (${failure.message})`,
      );
    }
  }
  await context.records.forgetUnknownWrite(paymentId, write);
  return await readOrder(context, order.orderId);
}

/** A first send dated ahead of this clock (another instance's clock): how old it is cannot be told. */
function datedAhead(write: UnknownWrite): boolean {
  return Date.parse(write.firstSentAt) > Date.now();
}

/** True once the kept write's key is past its hour (a first send dated ahead of now is not). */
function pastItsWindow(write: UnknownWrite): boolean {
  const age = Date.now() - Date.parse(write.firstSentAt);
  return Number.isFinite(age) && age >= KEPT_WRITE_WINDOW_MS;
}

function notARetry(operation: string, earlier: string, write: UnknownWrite): MedusaError {
  const until = new Date(Date.parse(write.firstSentAt) + KEPT_WRITE_WINDOW_MS).toISOString();
  return new MedusaError(
    MedusaError.Types.NOT_ALLOWED,
    `${operation}: an earlier ${earlier} of this order (sent ${write.firstSentAt}) has no known outcome, and this is not a retry of it; nothing was sent. Retry the earlier ${earlier} as it was (the same amount) to settle it, or try again after ${until}.`,
  );
}

/**
 * Nothing of the order is left to capture or release, and, for a refund, nothing captured is left to
 * refund: the service refuses the write whenever it comes.
 */
function cannotMoveMoney(write: UnknownWrite, order: Order): boolean {
  const open = toCents(order.totalAmount) - toCents(order.capturedAmount) - toCents(order.cancelledAmount);
  if (open > 0n) return false;
  return (
    write.operation !== "orders.refund" || toCents(order.refundedAmount) >= toCents(order.capturedAmount)
  );
}
