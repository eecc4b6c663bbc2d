import { MedusaError } from "@medusajs/framework/utils";
import {
  formatCents,
  IdempotencyWindowPassedError,
  type Order,
  OutcomeUnknownError,
  outcomeOf,
  toCents,
  type UnknownWrite,
  ValidationError,
} from "@purchase-auth/core";
import { logFieldsOf, toMedusaError } from "./errors";
import type { UnknownWriteKind } from "./payment-module-records";
import { type ProviderContext, readOrder } from "./provider-context";

// A capture, refund or cancel whose answer did not come may still be run by the service after the
// provider gave up (it runs what it took; only the answer is late), or may never have reached it.
// Medusa removes its row and the admin tries again, or asks for something else. Another write that
// read the order before the first one was run would send its whole difference, and the service would
// move both; sending the first one again before another would run money Medusa shows as failed. So
// the write is kept on its payment, exactly as sent (core's `error.write`), and, while it may still
// be on its way (KEPT_WRITE_IN_FLIGHT_MS), the next write of the same kind (a capture after a
// capture, a refund after a refund, a cancel after a cancel: one is kept a kind) of the order, under
// its lock:
// - goes on if it sends nothing (its total reached already: a follow of the service's figures, or
//   the retry of a write that landed, which settles it);
// - is the same request (the same key: the admin's retry): the kept write goes again with its key,
//   whose answer is the first one's outcome (or it runs now), and what is missing is read after;
// - is another capture (refund): refused, nothing sent. Another cancel carries no amount: it goes on.
// A kept write a follow found landed makes a capture (refund) of its same amount a probable repeat by
// someone who did not see it land (Medusa recorded it from the service's event): refused too.
//
// The write lives in the payment's metadata: Medusa rewrites the payment's data after each capture,
// refund and cancel (with what the provider returned, read before the lock), which could drop it;
// it never rewrites metadata.

/**
 * How long a kept write may still be on its way to the service, or run by it. Past it, whatever it
 * did shows in the service's order, and it can no longer move money. The reconcile job waits as long
 * before taking a recorded capture or refund for one never sent (RECORDED_WRITE_GRACE_MS).
 */
export const KEPT_WRITE_IN_FLIGHT_MS = 10 * 60_000;

/**
 * A kept write, with the amount of the capture (refund) Medusa recorded for it (`own`: the body
 * sends only what was missing), and when a follow found its total reached (landed).
 */
type KeptWrite = UnknownWrite & { own?: string; landed_at?: string };

/** The caller's write: its key, whether it would send anything, and its own amount (not a cancel). */
export interface NextWrite {
  operation: "Capture" | "Refund" | "Cancel";
  key: string | undefined;
  sends: boolean;
  cents?: bigint;
  /** Recorded by the plugin following the service (its event), not asked for by a person. */
  followed?: boolean;
}

/**
 * Keeps the write of a call that failed with an unknown outcome on payment `paymentId`, for the next
 * write of its order to settle, and returns the error to throw: for an unknown outcome, one that says
 * what to do (`failure` otherwise). Any other error keeps nothing: the service did not take that call.
 */
export async function keepUnknownWrite(
  context: ProviderContext,
  paymentId: string | undefined,
  error: unknown,
  failure: Error,
  ownCents?: bigint,
): Promise<Error> {
  if (paymentId === undefined || !OutcomeUnknownError.isInstance(error)) return failure;
  const kept: KeptWrite = {
    ...error.write,
    ...(ownCents === undefined ? {} : { own: formatCents(ownCents) }),
  };
  try {
    await context.records.keepUnknownWrite(paymentId, kindOf(error.write), kept);
  } catch (keeping) {
    // The caller's own error says what happened to its write; this one must not replace it.
    context.logger?.error(
      `purchase-auth: keeping the write of unknown outcome on payment ${paymentId} failed (${(keeping as Error).message}); the next write of its order will not wait for it`,
    );
    return failure;
  }
  const verb = verbOf(error.write);
  return new MedusaError(
    MedusaError.Types.UNEXPECTED_STATE,
    `${verb[0]!.toUpperCase()}${verb.slice(1)}: the service did not answer in time, and the ${verb} may have gone through. Try it again as it was (the same amount): for ${KEPT_WRITE_IN_FLIGHT_MS / 60_000} minutes only that retry is sent for this order, and it cannot ${verb} twice. If the payment already records it (the service's event arrived), it went through.`,
  );
}

/**
 * Settles the write kept on payment `paymentId` (if any) before the caller's `next` write of the
 * order goes on (see the rules above). Returns the order to work from: read anew after the kept
 * write was sent again. Throws a MedusaError, with nothing sent, when the caller's write must wait.
 */
export async function settleUnknownWrite(
  context: ProviderContext,
  paymentId: string | undefined,
  order: Order,
  next: NextWrite,
): Promise<Order> {
  if (paymentId === undefined) return order;
  const kind = next.operation.toLowerCase() as UnknownWriteKind;
  const write = (await context.records.unknownWriteOf(paymentId, kind)) as KeptWrite | undefined;
  if (write === undefined) return order;
  const label = { paymentId, earlier: write.operation, firstSentAt: write.firstSentAt };
  const forget = async (why: string) => {
    context.logger?.info(`purchase-auth: earlier write ${why} ${JSON.stringify(label)}`);
    await context.records.forgetUnknownWrite(paymentId, kind, write);
  };
  if (cannotMoveMoney(write, order)) {
    // Whatever became of it, nothing is left for it to do: no resend, which the service might not
    // answer now (an order cancelled while it is unreachable is still released).
    await forget(`can no longer move money (${order.status}); dropped without sending`);
    return order;
  }
  if (!mayBeOnItsWay(write)) {
    await forget("is no longer on its way; whatever it did shows in the order");
    return order;
  }
  if (write.landed_at !== undefined) {
    if (next.sends && repeats(write, next)) throw repeated(next.operation, write);
    return order;
  }
  if (!next.sends) {
    // Sends nothing, so nothing it does adds to the kept write. A write of its total finding the
    // total reached: it landed (unless still on its way while someone else moved that very total).
    // Recorded by the person's retry, who sees it done: settled. Recorded by a follow of the
    // service's event, which the person may not see: a repeat of its amount is refused for a while.
    if (write.idempotencyKey !== next.key) return order;
    if (!next.followed) {
      await forget("landed: its retry found its total reached");
      return order;
    }
    await context.records.keepUnknownWrite(paymentId, kind, {
      ...write,
      landed_at: new Date().toISOString(),
    });
    return order;
  }
  if (write.idempotencyKey !== next.key) {
    // Two cancels (Medusa's and the plugin's release of a canceled order's remainder) carry no
    // amount: whichever lands releases the rest, the other finds nothing left.
    if (next.operation === "Cancel") return order;
    throw notARetry(next.operation, write);
  }
  try {
    await context.client.resendUnknownWrite(write);
    context.logger?.info(`purchase-auth: earlier write settled by its retry ${JSON.stringify(label)}`);
  } catch (error) {
    if (IdempotencyWindowPassedError.isInstance(error) && !datedAhead(write)) {
      // Past its hour, by core's clock or the service's answer: its effect shows in the order.
    } else if (ValidationError.isInstance(error)) {
      // Not a write core ever handed out (edited by hand): nothing can be resent; say so loudly.
      context.logger?.error(
        `purchase-auth: the earlier write kept on the payment cannot be read and is dropped; check the order at the service ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
    } else if (outcomeOf(error) !== "refused" || IdempotencyWindowPassedError.isInstance(error)) {
      // Still no answer (or a first send dated ahead of this clock: another instance's clock).
      context.logger?.warn(
        `purchase-auth: settling an earlier ${verbOf(write)} before ${next.operation} failed ${JSON.stringify({ ...label, ...logFieldsOf(error) })}`,
      );
      const failure = toMedusaError(`Settling an earlier ${verbOf(write)}`, error);
      throw new MedusaError(
        MedusaError.Types.UNEXPECTED_STATE,
        `${next.operation}: an earlier ${verbOf(write)} of this order (sent ${write.firstSentAt}) has no answer from the service yet; nothing was sent for this one. Try again in a minute. (${failure.message})`,
      );
    }
  }
  await forget("settled by its retry");
  return await readOrder(context, order.orderId);
}

/** "capture", "refund" or "cancel". */
function verbOf(write: UnknownWrite): string {
  return write.operation.replace(/^orders\./, "");
}

/** The kind a write is kept under. */
function kindOf(write: UnknownWrite): UnknownWriteKind {
  return verbOf(write) as UnknownWriteKind;
}

/** The amount Medusa recorded for the kept write, in cents (a cancel has none). */
function amountOf(write: KeptWrite): bigint | undefined {
  return write.own === undefined ? undefined : toCents(write.own);
}

/** A capture (refund) of the same amount as a kept capture (refund) that landed. */
function repeats(write: KeptWrite, next: NextWrite): boolean {
  const amount = amountOf(write);
  return amount !== undefined && amount === next.cents;
}

/** A first send dated ahead of this clock (another instance's clock): how old it is cannot be told. */
function datedAhead(write: UnknownWrite): boolean {
  return Date.parse(write.firstSentAt) > Date.now();
}

/** Sent less than KEPT_WRITE_IN_FLIGHT_MS ago (or dated ahead of this clock). */
function mayBeOnItsWay(write: UnknownWrite): boolean {
  const age = Date.now() - Date.parse(write.firstSentAt);
  return !Number.isFinite(age) || age < KEPT_WRITE_IN_FLIGHT_MS;
}

function until(write: UnknownWrite): string {
  return new Date(Date.parse(write.firstSentAt) + KEPT_WRITE_IN_FLIGHT_MS).toISOString();
}

function notARetry(operation: string, write: UnknownWrite): MedusaError {
  const earlier = verbOf(write);
  return new MedusaError(
    MedusaError.Types.NOT_ALLOWED,
    `${operation}: an earlier ${earlier} of this order (sent ${write.firstSentAt}) has no known outcome yet, and this is not a retry of it; nothing was sent. Retry the earlier ${earlier} as it was (the same amount) to settle it, or try again after ${until(write)}.`,
  );
}

function repeated(operation: string, write: KeptWrite): MedusaError {
  const earlier = verbOf(write);
  const amount = amountOf(write);
  return new MedusaError(
    MedusaError.Types.NOT_ALLOWED,
    `${operation}: an earlier ${earlier} of ${amount === undefined ? "this amount" : formatCents(amount)} on this order (sent ${write.firstSentAt}), whose answer was lost, went through, and the payment records it; nothing was sent for this one. To ${earlier} the same amount once more, try again after ${until(write)}.`,
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
