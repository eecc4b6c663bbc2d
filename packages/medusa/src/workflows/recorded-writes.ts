import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { capturePaymentWorkflow, refundPaymentWorkflow } from "@medusajs/medusa/core-flows";
import { toCents } from "@purchase-auth/core";
import { orderLockName, withAdvisoryLock } from "../providers/purchase-auth/advisory-lock";
import { toCentsRounded } from "../providers/purchase-auth/amounts";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { readData } from "../providers/purchase-auth/session-data";
import { followServicePayment } from "./follow-service";
import { knexOf, OURS, SESSION_PAGE_SIZE } from "./lookups";
import { recordOrderTransactions } from "./order-transactions";
import { withPaymentLock } from "./payment-lock";
import { countTry, recordFailure, redoTriesOf, triedOut } from "./recorded-writes-given-up";
import {
  answeredOrFlaggedAgain,
  GIVEN_UP_SKIPPED,
  giveUpOn,
  markEarlierGiveUps,
} from "./recorded-writes-review";
import {
  amountOf,
  isRedoOf,
  liveRows,
  lookalikesOf,
  type Recorded,
  redoRowOf,
  removeSetAside,
  setAsideNow,
  setAsideRow,
  type Unsent,
  unsentRows,
} from "./set-aside";

export { RECORDED_WRITE_GIVE_UP_AFTER_MS, RECORDED_WRITE_MAX_TRIES } from "./recorded-writes-given-up";

// Medusa records a capture or refund (its row, committed on its own), then calls the provider, and
// deletes the row when that call throws. A process killed between the two leaves the row, and the
// service never heard of it: Medusa shows money captured or refunded that the service does not
// hold, and nothing else ever sends it. Such a row (among the newest ones above the service's
// figure, all of the payment's older than RECORDED_WRITE_GRACE_MS, so a call still on its way is
// not raced) is done again the way Medusa does it: the row is set aside (set-aside.ts) and Medusa's
// own capture or refund workflow runs for its amount, who and why, so the provider sends it and the
// order gets its transaction; then the row set aside is removed. The provider sends only what is
// missing up to the total Medusa then records, under a key derived from that total and under the
// order's lock, so nothing is sent twice, whoever else sends it. If the service can no longer take
// it (the authorization expired), Medusa's workflow removes its new row as for any refused call, and
// Medusa shows what the service holds. A passing fault, or a process killed before the redo
// settled, leaves the row set aside: the next run repeats the redo, unless Medusa recorded it
// already. One row a payment a run; captures before refunds. A redo still failing after
// RECORDED_WRITE_MAX_TRIES tries over RECORDED_WRITE_GIVE_UP_AFTER_MS is given up: the row stays set
// aside, the payment is flagged for a person, and runs skip it until a person answers
// (recorded-writes-given-up.ts, recorded-writes-review.ts).

/** How old a capture or refund must be before its row is taken for one whose call never left. */
export const RECORDED_WRITE_GRACE_MS = 10 * 60_000;

/** How far back the job looks for such rows. */
const LOOK_BACK_MS = 30 * 24 * 60 * 60_000;

/**
 * Sends again (or, when the service refuses them, removes) the captures and refunds Medusa recorded
 * that never reached the service. Returns the payments it acted on. A failure on one payment is
 * logged and the run goes on.
 */
export async function resendRecordedWrites(
  container: MedusaContainer,
  now: Date,
  pageSize = SESSION_PAGE_SIZE,
): Promise<string[]> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  // One pass at a time, across processes: two runs could each redo one row set aside, each seeing
  // no redo of it recorded yet, and send it twice. A run that finds one going skips the pass.
  return await knexOf(container).transaction(async (trx) => {
    const { rows } = await trx.raw("select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as taken", [
      "purchase-auth:recorded-writes",
    ]);
    if (!(rows[0] as { taken?: boolean } | undefined)?.taken) {
      logger.info("purchase-auth: another run is sending recorded writes again; this one skips it");
      return [];
    }
    const repaired: string[] = [];
    await markEarlierGiveUps(container);
    const settledBefore = new Date(now.getTime() - RECORDED_WRITE_GRACE_MS);
    for await (const row of paymentsAboveTheirData(container, now, pageSize)) {
      // The pass's lock lives in this transaction, idle meanwhile: a statement keeps it from an
      // idle-in-transaction timeout and, should the session be gone with the lock, ends the pass.
      await trx.raw("select 1", []);
      try {
        // Decided and set aside under the payment's and the order's locks (a follow of the
        // service's figures, or a provider call still on its way, reads the records meanwhile);
        // done again outside them: Medusa's workflow takes the order's lock in the provider, and a
        // flow holding one lock must not wait for a slot to take another.
        const unsent = await withPaymentLock(container, row.id, () =>
          takeOldestUnsent(container, row, settledBefore, now),
        );
        if (unsent === undefined) continue;
        if (!(await sendAgain(container, row, unsent, now))) {
          // A follow meanwhile may have given the redo's row, which Medusa then deleted, its
          // transaction: it stops counting now, not at the next follow.
          await withPaymentLock(container, row.id, () => recordOrderTransactions(container, row.id));
          continue;
        }
        await withPaymentLock(container, row.id, () => followServicePayment(container, row));
        repaired.push(row.id);
      } catch (error) {
        logger.error(
          `purchase-auth: sending again what payment ${row.id} recorded failed: ${(error as Error).message}`,
        );
      }
    }
    return repaired;
  });
}

interface PaymentRow {
  id: string;
  provider_id: string;
  data: Record<string, unknown> | null;
}

/**
 * This provider's payments with a capture or refund made in the last 30 days whose recorded
 * captures or refunds add up (to the cent) to more than the service's figures their data last read
 * (a call answered writes them in), and those with a row set aside for a redo not done yet; not
 * those given up on and still flagged for a person (they cost nothing, however many).
 */
async function* paymentsAboveTheirData(
  container: MedusaContainer,
  now: Date,
  pageSize: number,
): AsyncGenerator<PaymentRow> {
  const since = new Date(now.getTime() - LOOK_BACK_MS);
  const figure = (field: string) =>
    `case when p.data->>'${field}' ~ '^[0-9]+([.][0-9]+){0,1}$' then (p.data->>'${field}')::numeric else 0 end`;
  const recorded = (table: string) =>
    `round((select coalesce(sum(w.amount), 0) from ${table} w where w.payment_id = p.id and w.deleted_at is null), 2)`;
  let afterId = "";
  for (;;) {
    const { rows } = await knexOf(container).raw(
      `select p.id, p.provider_id, p.data from payment p
       where p.id in (select payment_id from capture where created_at > ? or deleted_at is not null
                      union select payment_id from refund where created_at > ? or deleted_at is not null)
         and p.provider_id like ? and p.deleted_at is null and p.id > ?
         and (${recorded("capture")} > ${figure("captured_amount")}
              or ${recorded("refund")} > ${figure("refunded_amount")}
              or exists (select 1 from capture c where c.payment_id = p.id and c.deleted_at is not null)
              or exists (select 1 from refund r where r.payment_id = p.id and r.deleted_at is not null))
         and ${GIVEN_UP_SKIPPED}
       order by p.id limit ?`,
      [since, since, OURS, afterId, pageSize],
    );
    yield* rows as unknown as PaymentRow[];
    if (rows.length < pageSize) return;
    afterId = rows[rows.length - 1]!.id as string;
  }
}

/**
 * The row of the payment to do again: one set aside by an earlier run whose redo did not settle,
 * else the oldest capture (then refund) the service never got, now set aside (soft-deleted: Medusa's
 * records no longer count it, and it keeps its amount, who and why until its redo settles; Medusa
 * itself only ever deletes such rows for good). Undefined when there is none: the data only lagged (a
 * process killed after the service answered), and it gets the service's figures. The redo aims at
 * the total Medusa records, so it also sends any newer row lost the same way. Runs under the
 * payment's lock, and the order's, which a provider call on its way holds.
 */
async function takeOldestUnsent(
  container: MedusaContainer,
  row: PaymentRow,
  settledBefore: Date,
  now: Date,
): Promise<Unsent | undefined> {
  const orderId = readData(row.data ?? undefined).order_id;
  if (!orderId) return undefined;
  return await withAdvisoryLock(knexOf(container), orderLockName(orderId), async () => {
    const setAside = await setAsideRow(container, row.id);
    const redo = setAside && (await redoRowOf(container, row.id, setAside));
    if (setAside && redo) {
      // Its redo was recorded, and the process died before removing it: never sent a second time.
      // Nor perhaps before Medusa's workflow gave the redo's row its transaction.
      await removeSetAside(container, setAside);
      await recordOrderTransactions(container, row.id, { kind: setAside.kind, id: redo });
      // Others still wait: the oldest of them next run, before any newer one is looked for.
      if (await setAsideRow(container, row.id)) return undefined;
    } else if (setAside) {
      // A plugin row of its amount recorded since its last try may be that try landed: a person
      // tells (once about those rows: answered, the row is sent).
      const tries = redoTriesOf(setAside.row.metadata);
      const lookalikes = await lookalikesOf(container, row.id, setAside);
      if (lookalikes.some((id) => !tries.asked_about.includes(id))) {
        await giveUpOn(container, row.id, setAside, { tries, lookalikes }, now);
        return undefined;
      }
      // Given up on before, and read again: a person answered (its tries start afresh; what they
      // were asked about stays, so a plugin row recorded since is asked about first), or the flag
      // was lost (written again, and nothing sent).
      if (!(await answeredOrFlaggedAgain(container, row.id, setAside))) return undefined;
      return await setAsideForRedo(container, row.id, setAside.kind, [setAside.row]);
    }
    const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
    const stored = await payment.retrievePayment(row.id, {
      select: ["id", "data"],
      relations: ["captures", "refunds"],
    });
    const captures = (stored.captures ?? []) as unknown as Recorded[];
    const refunds = (stored.refunds ?? []) as unknown as Recorded[];
    // A call may still be on its way: its row is not taken for a lost one yet.
    if ([...captures, ...refunds].some((r) => new Date(r.created_at) > settledBefore)) return undefined;
    const order = await purchaseAuthProvider(container, row.provider_id).serviceOrder(stored.data);
    if (!order) return undefined;
    // Captures first: a refund needs the money captured.
    const captured = unsentRows(captures, toCents(order.capturedAmount));
    const kind = captured.length > 0 ? "capture" : "refund";
    const unsent = captured.length > 0 ? captured : unsentRows(refunds, toCents(order.refundedAmount));
    if (unsent.length === 0) {
      await followServicePayment(container, row);
      return undefined;
    }
    // Every one of them: the redo of the oldest then sends its own amount only, and Medusa's
    // workflow finds no other row of it without a transaction to give the redo's amount. The
    // others are done again by the next runs.
    return await setAsideForRedo(container, row.id, kind, unsent);
  });
}

/**
 * Sets the rows aside, then brings the order's transactions in line before Medusa's workflow runs:
 * theirs stop counting, and every row the plugin recorded has one (the workflow would give a row
 * without one the redo's amount). A crash between the two: the next run sets the oldest aside
 * again. Returns the oldest, the one to redo.
 */
async function setAsideForRedo(
  container: MedusaContainer,
  paymentId: string,
  kind: Unsent["kind"],
  rows: Recorded[],
): Promise<Unsent> {
  await setAsideNow(container, kind, rows);
  await recordOrderTransactions(container, paymentId);
  return { kind, row: rows[0]! };
}

/**
 * Medusa's own capture or refund workflow, for the set-aside row's amount, who and why. True when it
 * settled: sent (the row set aside is then removed for good), or refused by the service for good
 * (Medusa removes its new row as for any refused call, and shows what the service holds). A passing
 * failure (the service unreachable, a lock timeout), or a redo that reached the service but could
 * not be recorded, leaves the row set aside for the next run, until it was tried too often and too
 * long (triedOut): then the pass gives up on it (giveUpOn) and says false.
 */
async function sendAgain(
  container: MedusaContainer,
  payment: PaymentRow,
  unsent: Unsent,
  now: Date,
): Promise<boolean> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const { kind, row } = unsent;
  // Tried out by earlier runs, the last one cut short (a crash) or the bound passed since: no more.
  const earlier = redoTriesOf(row.metadata);
  if (triedOut(earlier, now)) return await giveUpOn(container, payment.id, unsent, { tries: earlier }, now);
  // Counted before it is made, in the row: a try a crash cuts short counts too.
  const counted = await countTry(container, unsent, now);
  logger.warn(
    `purchase-auth: ${kind} ${row.id} of payment ${payment.id} (${amountOf(row)}) was recorded but never reached the service; sending it again`,
  );
  for (let tries = 1; ; tries++) {
    const liveBefore = await liveRows(container, kind, payment.id);
    try {
      await runRedo(container, payment, unsent);
      break;
    } catch (error) {
      const message = (error as Error).message;
      // Not knowing the service's figures is a passing failure too (the service unreachable).
      const fate = await redoFate(container, payment, unsent, liveBefore.ids).catch(
        () => ({ kind: "passing" }) as const,
      );
      if (fate.kind === "recorded") {
        // E.g. Medusa's refund workflow refusing a canceled order's credit line, or an order with a
        // change in progress, after the refund: its compensation removed the row's transaction.
        await withPaymentLock(container, payment.id, () =>
          recordOrderTransactions(container, payment.id, { kind, id: fate.redo }),
        );
        logger.warn(
          `purchase-auth: ${kind} ${row.id} of payment ${payment.id} was sent again and Medusa recorded it (${fate.redo}), but its workflow then failed (${message}); it counts as done`,
        );
        break;
      }
      // Landed, its answer lost: once more at once, so Medusa records it (the provider sends
      // nothing: it counts as done) before a webhook's follow records it without its transaction.
      if (fate.kind === "landed" && tries === 1) continue;
      if (fate.kind !== "refused") {
        // A passing failure (WARN: an outage), or landed twice (ERROR: the service holds more than
        // Medusa shows): the row stays set aside, the next run repeats it, unless it is tried out.
        const failed = await recordFailure(container, unsent, message);
        if (triedOut(failed, now))
          return await giveUpOn(container, payment.id, unsent, { tries: failed }, now);
        logger[fate.kind === "landed" ? "error" : "warn"](
          `purchase-auth: sending ${kind} ${row.id} of payment ${payment.id} again ${fate.kind === "landed" ? "reached the service, but Medusa could not record it" : "failed"} (${message}); the next run repeats it (try ${counted.tries} since ${counted.first_tried_at})`,
        );
        return false;
      }
      logger.error(
        `purchase-auth: the service does not take ${kind} ${row.id} of payment ${payment.id} any more (${message}); it is removed, and Medusa shows what the service holds`,
      );
      break;
    }
  }
  await removeSetAside(container, unsent);
  return true;
}

/** Medusa's own capture or refund workflow for the row's amount, who and why. */
async function runRedo(container: MedusaContainer, payment: PaymentRow, unsent: Unsent): Promise<void> {
  const { row } = unsent;
  if (unsent.kind === "capture") {
    await capturePaymentWorkflow(container).run({
      input: {
        payment_id: payment.id,
        amount: amountOf(row),
        ...(row.created_by ? { captured_by: row.created_by } : {}),
      },
    });
    return;
  }
  await refundPaymentWorkflow(container).run({
    input: {
      payment_id: payment.id,
      amount: amountOf(row),
      ...(row.created_by ? { created_by: row.created_by } : {}),
      ...(row.note ? { note: row.note } : {}),
      ...(row.refund_reason_id ? { refund_reason_id: row.refund_reason_id } : {}),
    },
  });
}

/** How a redo that threw ended: `redo` is the row Medusa recorded for it and kept. */
type RedoFate =
  | { kind: "recorded"; redo: string }
  | { kind: "landed" }
  | { kind: "refused" }
  | { kind: "passing" };

/**
 * After a redo that threw: "recorded" when Medusa kept a new row of the redo's amount (not among
 * `before`, the live rows' ids before it) and the service holds what Medusa records (a step after
 * the send failed), "landed" when the service holds the row's amount beyond Medusa's records (its
 * answer was lost, or Medusa's workflow failed and removed its row), "refused" when the service's
 * order cannot take it any more (cancelled or expired, too little left), else "passing".
 */
async function redoFate(
  container: MedusaContainer,
  payment: PaymentRow,
  unsent: Unsent,
  before: ReadonlySet<string>,
): Promise<RedoFate> {
  const order = await purchaseAuthProvider(container, payment.provider_id).serviceOrder(payment.data);
  if (!order) return { kind: "passing" };
  const amount = toCentsRounded(amountOf(unsent.row));
  const live = await liveRows(container, unsent.kind, payment.id);
  const atService = toCents(unsent.kind === "capture" ? order.capturedAmount : order.refundedAmount);
  const redo = live.rows.find((r) => !before.has(r.id) && isRedoOf(r, unsent.row));
  if (redo && atService >= live.total) return { kind: "recorded", redo: redo.id };
  if (atService >= live.total + amount) return { kind: "landed" };
  if (unsent.kind === "capture" && (order.status === "Cancelled" || order.status === "Expired"))
    return { kind: "refused" };
  const left =
    unsent.kind === "capture"
      ? toCents(order.totalAmount) - toCents(order.capturedAmount) - toCents(order.cancelledAmount)
      : toCents(order.capturedAmount) - toCents(order.refundedAmount);
  return left < amount ? { kind: "refused" } : { kind: "passing" };
}
