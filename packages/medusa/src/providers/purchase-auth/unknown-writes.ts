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
// provider gave up (it runs what it took; only the answer is late). Medusa removes its row and the
// admin tries again, or asks for something else: that next write read the service without the first
// and sent its whole difference, and the service moved both. So the write is kept on its payment,
// exactly as sent (core's `error.write`), and the next write of the order settles it first, under
// the order's lock: the same request with the same key gets the first one's outcome (or runs it now,
// as retrying it would), and only then is the order read and what is missing sent. While the
// service still runs it, the next write is refused with nothing sent.
//
// The write lives in the payment's metadata: Medusa rewrites the payment's data after each capture,
// refund and cancel (with what the provider returned, read before the lock), which could drop it;
// it never rewrites metadata.

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
 * Settles the write kept on payment `paymentId` (if any) before anything else is sent for its order:
 * sent again with its key, whatever the service answers about it is its outcome, and the service's
 * order then shows it. Throws, with nothing sent for the caller's write, while that outcome is still
 * not known.
 */
export async function settleUnknownWrite(
  context: ProviderContext,
  paymentId: string | undefined,
  orderId: string,
  operation: string,
): Promise<void> {
  if (paymentId === undefined) return;
  const write = (await context.records.unknownWriteOf(paymentId)) as UnknownWrite | undefined;
  if (write === undefined) return;
  const label = { paymentId, earlier: write.operation, firstSentAt: write.firstSentAt };
  const order = await readOrder(context, orderId);
  if (cannotMoveMoney(write, order)) {
    // Whatever became of it, nothing is left for it to do: no resend, which the service might not
    // answer now (an order cancelled while it is unreachable is still released).
    context.logger?.info(
      `purchase-auth: earlier write can no longer move money (${order.status}); dropped without sending ${JSON.stringify(label)}`,
    );
    await context.records.forgetUnknownWrite(paymentId, write);
    return;
  }
  try {
    await context.client.resendUnknownWrite(write);
    context.logger?.info(`purchase-auth: earlier write settled before ${operation} ${JSON.stringify(label)}`);
  } catch (error) {
    if (IdempotencyWindowPassedError.isInstance(error)) {
      // Sent over an hour ago: the service finished with it long since, and its order shows it.
      context.logger?.info(
        `purchase-auth: earlier write is past the service's idempotency hour; its effect, if any, shows in the order ${JSON.stringify(label)}`,
      );
    } else if (ValidationError.isInstance(error)) {
      // Not a write core ever handed out (edited by hand): nothing can be resent; say so loudly.
      context.logger?.error(
        `purchase-auth: the earlier write kept on the payment cannot be read and is dropped; check the order at the service ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
    } else if (outcomeOf(error) === "refused") {
      context.logger?.info(
        `purchase-auth: earlier write was refused by the service ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
    } else {
      const earlier = write.operation.replace(/^orders\./, "");
      // WARN: nothing was sent for the caller's write, and its error (Medusa logs it) says why.
      context.logger?.warn(
        `purchase-auth: settling an earlier ${earlier} before ${operation} failed ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
      const failure = toMedusaError(`Settling an earlier ${earlier}`, error);
      throw new MedusaError(
        MedusaError.Types.UNEXPECTED_STATE,
        `${operation}: an earlier ${earlier} of this order (sent ${write.firstSentAt}) has no answer from the service yet; nothing was sent for this one. Try again in a minute. (${failure.message})`,
      );
    }
  }
  await context.records.forgetUnknownWrite(paymentId, write);
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
