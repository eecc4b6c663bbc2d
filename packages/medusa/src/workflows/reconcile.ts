import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { isReleasing, readData } from "../providers/purchase-auth/session-data";
import { releaseCanceledOrderPayments } from "./canceled-orders";
import { chargeStoredTokenWorkflow } from "./charge-stored-token";
import { convertChargedDrafts } from "./charged-drafts";
import {
  orderIsCanceled,
  orderOfPaymentCollection,
  reconcilableSessionsInState,
  SESSION_PAGE_SIZE,
  type SessionRow,
} from "./lookups";
import { flagOverdueOutcomes } from "./outcome-overdue";
import { resendRecordedWrites } from "./recorded-writes";
import { resolveOne } from "./resolve-unknown-session";

export interface ReconcileReport {
  /** Sessions whose unknown outcome was settled (declined, released, or pending a webhook). */
  resolved: string[];
  /** Sessions still unknown, to be tried again on the next run. */
  stillUnknown: string[];
  /**
   * Sessions flagged for review by this run: an unknown outcome whose key is past the service's
   * idempotency window, or an accepted (202) authorization whose outcome is overdue
   * (OUTCOME_OVERDUE: no webhook long after its last scheduled attempt).
   */
  flagged: string[];
  /**
   * Payments with a capture or refund Medusa recorded that never reached the service (a process
   * killed between the two): sent again, or removed when the service refused it (recorded-writes.ts).
   */
  resent: string[];
  /**
   * Draft orders converted into orders because they hold a payment of their charge the admin route
   * did not see (an unknown outcome settled later, or a stop between charge and conversion).
   */
  converted: string[];
}

/**
 * Resolves payment sessions whose authorization outcome is unknown (the cart did not complete on
 * them), with the same idempotency key, while the service still answers for it (core refuses a key
 * too old to send safely). What it finds is settled: an order is released in full, a decline marks
 * the session failed. After the window the session is flagged for review (`review_reason` in its
 * data) and left alone, unless it is releasing: its release is repeated every run, flagged or not,
 * until it is known (resolve-unknown-session.ts). Each session is claimed before its key is sent again (resolve-unknown-session.ts):
 * a session no longer unknown on the attempt read, or being resent by a checkout, is skipped; while
 * the job holds the claim a checkout does not resend the key and a webhook does not authorize the
 * session. So it may run beside checkouts, webhooks and itself without releasing an order Medusa
 * records as paid. A failure on one session is logged and the run goes on.
 *
 * Then it flags the sessions the service accepted (202) whose outcome is overdue: no webhook told it
 * the provider's `outcomeGraceMs` after the last scheduled attempt (see outcome-overdue.ts), and
 * releases what live payments of canceled orders still hold at the service (canceled-orders.ts).
 * Draft orders holding a payment of their charge are converted into orders (charged-drafts.ts).
 * Last, it sends again the captures and refunds Medusa recorded that never reached the service
 * (recorded-writes.ts).
 */
export async function reconcileUnknownOutcomes(
  container: MedusaContainer,
  now = new Date(),
  /** @internal How many sessions one query reads; every session is reached whatever it is. */
  pageSize = SESSION_PAGE_SIZE,
): Promise<ReconcileReport> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const report: ReconcileReport = { resolved: [], stillUnknown: [], flagged: [], resent: [], converted: [] };
  // Every unknown session not flagged yet, in pages: the flagged ones (left for a person) are not
  // read at all, so however many there are, a newer session whose key can still be sent is reached.
  // A releasing session is read even when flagged: its release is repeated until it is known.
  for await (const session of reconcilableSessionsInState(container, "unknown", pageSize)) {
    // A merchant-initiated charge (a session of an order's own payment collection): there is no cart
    // that failed to complete, the order is waiting for this very charge. Repeat it through the charge
    // workflow (same session, same key) so Medusa records the payment, instead of releasing it.
    try {
      // A session the job left releasing is only ever released (resolveOne), never charged again.
      const releasing = isReleasing(readData(session.data ?? undefined));
      const orderId = releasing
        ? undefined
        : await orderOfPaymentCollection(container, session.payment_collection_id);
      // A canceled order is not charged (the workflow refuses it): its session is settled like a
      // checkout's, whatever the service did released, so no money is held for a canceled order.
      if (
        orderId !== undefined &&
        !(await orderIsCanceled(container, orderId)) &&
        (await chargedForOrder(container, orderId, session, report))
      ) {
        continue;
      }
      await resolveOne(container, session, now, report);
    } catch (error) {
      // One session's failure (a statement, the network) must not keep the others waiting.
      logger.error(
        `purchase-auth: reconciling payment session ${session.id} failed: ${(error as Error).message}`,
      );
      report.stillUnknown.push(session.id);
    }
  }
  // Draft orders whose charge the admin route did not see settled: converted, as it would have.
  report.converted.push(...(await convertChargedDrafts(container, pageSize)));
  report.flagged.push(...(await flagOverdueOutcomes(container, now, pageSize)));
  // Payments of canceled orders that Medusa's order cancel left holding money at the service.
  await releaseCanceledOrderPayments(container, pageSize);
  report.resent.push(...(await resendRecordedWrites(container, now, pageSize)));
  return report;
}

/**
 * Runs the charge workflow for `orderId`; true when it acted on `sessionId` (and the report says
 * how it ended). False when the order's charge lies elsewhere (it already has another payment): the
 * session is then settled like a checkout's.
 */
async function chargedForOrder(
  container: MedusaContainer,
  orderId: string,
  session: SessionRow,
  report: ReconcileReport,
): Promise<boolean> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const sessionId = session.id;
  try {
    // The session's own provider: with several purchase-auth providers configured the workflow
    // cannot guess one (and the session's key is that provider's).
    const { result } = await chargeStoredTokenWorkflow(container).run({
      input: { order_id: orderId, provider_id: session.provider_id },
    });
    if (result.payment_session_id !== sessionId) return false;
    if (result.status !== "unknown") report.resolved.push(sessionId);
    else if (result.retry === "no") {
      report.flagged.push(sessionId);
      logger.error(`purchase-auth: payment session ${sessionId} needs review: ${result.message}`);
    } else report.stillUnknown.push(sessionId);
  } catch (error) {
    logger.warn(`purchase-auth: charging order ${orderId} again failed: ${(error as Error).message}`);
    report.stillUnknown.push(sessionId);
  }
  return true;
}
