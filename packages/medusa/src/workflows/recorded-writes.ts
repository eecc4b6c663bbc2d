import type { IPaymentModuleService, MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils";
import { capturePaymentWorkflow, refundPaymentWorkflow } from "@medusajs/medusa/core-flows";
import { toCents } from "@purchase-auth/core";
import { sumExact, toCentsRounded } from "../providers/purchase-auth/amounts";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { followServicePayment } from "./follow-service";
import { knexOf, OURS, SESSION_PAGE_SIZE } from "./lookups";
import { withPaymentLock } from "./payment-lock";

// Medusa records a capture or refund (its row, committed on its own), then calls the provider, and
// deletes the row when that call throws. A process killed between the two leaves the row, and the
// service never heard of it: Medusa shows money captured or refunded that the service does not
// hold, and nothing else ever sends it. Such a row (among the newest ones above the service's
// figure, all of the payment's older than RECORDED_WRITE_GRACE_MS, so a call still on its way is
// not raced) is done again the way Medusa does it: the row is removed and Medusa's own capture or
// refund workflow runs for its amount, who and why, so the provider sends it and the order gets its
// transaction. The provider sends only what is missing up to the total Medusa then records, under a
// key derived from that total and under the order's lock, so nothing is sent twice, whoever else
// sends it. If the service refuses it now (the authorization expired), Medusa's workflow removes its
// row as for any refused call: Medusa then shows what the service holds. So does a process killed
// between removing and sending, or a passing fault on the send: never above the service's figures.
// One row a payment a run; captures before refunds.

/** How old a capture or refund must be before its row is taken for one whose call never left. */
export const RECORDED_WRITE_GRACE_MS = 10 * 60_000;

/** How far back the job looks for such rows. */
const LOOK_BACK_MS = 30 * 24 * 60 * 60_000;

interface Recorded {
  id: string;
  raw_amount?: unknown;
  amount?: unknown;
  created_at: Date | string;
  created_by?: string | null;
  note?: string | null;
  refund_reason_id?: string | null;
}

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
  const repaired: string[] = [];
  const settledBefore = new Date(now.getTime() - RECORDED_WRITE_GRACE_MS);
  for await (const row of paymentsAboveTheirData(container, now, pageSize)) {
    try {
      // Decided and removed under the payment's lock (a follow of the service's figures would read
      // the records meanwhile); done again outside it: Medusa's workflow takes the order's lock in
      // the provider, and a flow holding one lock must not wait for a slot to take another.
      const unsent = await withPaymentLock(container, row.id, () =>
        takeOldestUnsent(container, row, settledBefore),
      );
      if (unsent === undefined) continue;
      await sendAgain(container, row, unsent);
      await withPaymentLock(container, row.id, () => followServicePayment(container, row));
      repaired.push(row.id);
    } catch (error) {
      logger.error(
        `purchase-auth: sending again what payment ${row.id} recorded failed: ${(error as Error).message}`,
      );
    }
  }
  return repaired;
}

interface PaymentRow {
  id: string;
  provider_id: string;
  data: Record<string, unknown> | null;
}

/**
 * This provider's payments whose recorded captures or refunds add up to more than the service's
 * figures their data last read (a call answered writes them in), with one made in the last 30 days.
 */
async function* paymentsAboveTheirData(
  container: MedusaContainer,
  now: Date,
  pageSize: number,
): AsyncGenerator<PaymentRow> {
  const since = new Date(now.getTime() - LOOK_BACK_MS);
  const figure = (field: string) =>
    `case when p.data->>'${field}' ~ '^[0-9]+([.][0-9]+){0,1}$' then (p.data->>'${field}')::numeric else 0 end`;
  let afterId = "";
  for (;;) {
    const { rows } = await knexOf(container).raw(
      `select p.id, p.provider_id, p.data from payment p
       where p.provider_id like ? and p.deleted_at is null and p.id > ?
         and (exists (select 1 from capture c where c.payment_id = p.id and c.deleted_at is null and c.created_at > ?)
              or exists (select 1 from refund r where r.payment_id = p.id and r.deleted_at is null and r.created_at > ?))
         and ((select coalesce(sum(c.amount), 0) from capture c where c.payment_id = p.id and c.deleted_at is null)
                > ${figure("captured_amount")}
              or (select coalesce(sum(r.amount), 0) from refund r where r.payment_id = p.id and r.deleted_at is null)
                > ${figure("refunded_amount")})
       order by p.id limit ?`,
      [OURS, afterId, since, since, pageSize],
    );
    yield* rows as unknown as PaymentRow[];
    if (rows.length < pageSize) return;
    afterId = rows[rows.length - 1]!.id as string;
  }
}

interface Unsent {
  kind: "capture" | "refund";
  row: Recorded;
}

/**
 * The oldest capture (else refund) of the payment the service never got, removed from Medusa's
 * records; undefined when there is none (the data only lagged, a process killed after the service
 * answered: it gets the service's figures). Its redo aims at the total Medusa records, so it also
 * sends any newer row lost the same way. Runs under the payment's lock.
 */
async function takeOldestUnsent(
  container: MedusaContainer,
  row: PaymentRow,
  settledBefore: Date,
): Promise<Unsent | undefined> {
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
  const [capture] = newestAbove(captures, toCents(order.capturedAmount));
  if (capture) {
    await payment.deleteCaptures([capture.id]);
    return { kind: "capture", row: capture };
  }
  const [refund] = newestAbove(refunds, toCents(order.refundedAmount));
  if (refund) {
    await payment.deleteRefunds([refund.id]);
    return { kind: "refund", row: refund };
  }
  await followServicePayment(container, row);
  return undefined;
}

/**
 * Medusa's own capture or refund workflow, for the removed row's amount, who and why. If the service
 * refuses it, Medusa removes its new row as for any refused call, and Medusa shows what the service
 * holds.
 */
async function sendAgain(container: MedusaContainer, payment: PaymentRow, unsent: Unsent): Promise<void> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const { kind, row } = unsent;
  logger.warn(
    `purchase-auth: ${kind} ${row.id} of payment ${payment.id} (${amountOf(row)}) was recorded but never reached the service; sending it again`,
  );
  try {
    if (kind === "capture") {
      await capturePaymentWorkflow(container).run({
        input: {
          payment_id: payment.id,
          amount: amountOf(row),
          ...(row.created_by ? { captured_by: row.created_by } : {}),
        },
      });
    } else {
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
  } catch (error) {
    logger.error(
      `purchase-auth: the service did not take ${kind} ${row.id} of payment ${payment.id} again (${(error as Error).message}); Medusa now shows what the service holds`,
    );
  }
}

/** The newest rows whose sum lies above `atService`, oldest first: those the service never got. */
function newestAbove(rows: Recorded[], atService: bigint): Recorded[] {
  const ordered = [...rows].sort(
    (a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || (a.id < b.id ? -1 : 1),
  );
  const unsent: Recorded[] = [];
  while (ordered.length > 0 && toCentsRounded(sumExact(ordered.map(amountOf))) > atService) {
    unsent.unshift(ordered.pop()!);
  }
  return unsent;
}

function amountOf(row: Recorded): string {
  return sumExact([row.raw_amount ?? row.amount]);
}
