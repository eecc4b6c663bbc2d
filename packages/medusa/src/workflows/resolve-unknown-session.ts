import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import type { UnknownResolution } from "../providers/purchase-auth/authorize-payment";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import {
  isReleasing,
  type PurchaseAuthData,
  readData,
  writeData,
} from "../providers/purchase-auth/session-data";
import {
  claimResend,
  JOB_CLAIM,
  releaseClaim,
  replaceSessionDataIfUnchanged,
  sessionRowAnyState,
} from "../providers/purchase-auth/session-sql";
import { knexOf, type SessionRow } from "./lookups";
import type { ReconcileReport } from "./reconcile";

const UNCLAIMED = { resend_claimed_at: null, resend_claimed_by: null };

/**
 * Resolves one unknown session the job read (perhaps minutes ago). Resending its key may move money:
 * in synchronous mode the service replays its 200 and the order is released. So first, in one
 * statement, the session is claimed, which succeeds only while it is still unknown on the attempt
 * read and no checkout is resending it: a session authorized meanwhile (by a webhook or the
 * customer's retried checkout) is skipped. While the claim holds, a checkout does not resend the key
 * and a webhook does not change the state (session-sql.ts), so the job's final write, guarded on
 * the data it claimed, finds the session as it left it. Should it not (a claim held past its TTL)
 * after an order was released, that is logged at ERROR and the session flagged for review, unless
 * the session was deleted or recorded canceled for that order meanwhile (settled: INFO).
 *
 * Before an order found is released, the session is marked releasing (release_started_at, with
 * one statement guarded on the claimed data; nothing is sent if that fails). A release whose answer
 * is lost (or a crash before it is sent) leaves it so: no webhook or checkout authorizes it, and
 * the next run repeats the release with the same keys instead of resending the authorization.
 */
export async function resolveOne(
  container: MedusaContainer,
  session: SessionRow,
  now: Date,
  report: ReconcileReport,
): Promise<void> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const read = readData(session.data ?? undefined);
  const claimed = await claimResend(knexOf(container), session.id, read.authorize_attempt ?? 1, JOB_CLAIM);
  if (!claimed) {
    logger.info(
      `purchase-auth: payment session ${session.id} is no longer unknown on attempt ${read.authorize_attempt ?? 1}, has a payment in Medusa, or a checkout is resending it now; the reconcile job leaves it`,
    );
    return;
  }
  const provider = purchaseAuthProvider(container, session.provider_id);
  // What the session holds as the job last wrote it: each guarded write compares against it.
  let written: Record<string, unknown> = claimed;
  const recordIntent = async (releasing: PurchaseAuthData) => {
    const data = writeData(releasing);
    if (!(await replaceSessionDataIfUnchanged(knexOf(container), session.id, written, data))) return false;
    written = data;
    return true;
  };
  let resolution: UnknownResolution;
  try {
    resolution = isReleasing(readData(claimed))
      ? await provider.finishRelease(claimed)
      : await provider.resolveUnknown(claimed, now, recordIntent);
  } catch (error) {
    if (await flaggedStuckRelease(container, session.id, written, now, error as Error)) {
      report.flagged.push(session.id);
      return;
    }
    // The claim is given back; a session marked releasing stays so, for the next run (flagged or not).
    await replaceSessionDataIfUnchanged(knexOf(container), session.id, written, { ...written, ...UNCLAIMED });
    logger.warn(
      `purchase-auth: reconciling payment session ${session.id} failed: ${(error as Error).message}`,
    );
    report.stillUnknown.push(session.id);
    return;
  }
  if (resolution.kind === "changed") {
    // Someone wrote to the session (the intent write failed): the claim is given back, or checkouts
    // would be refused and webhooks dropped for the claim's 10 minutes, and the next run skip it.
    const claim = { at: String(claimed.resend_claimed_at), by: JOB_CLAIM };
    const givenBack = await releaseClaim(knexOf(container), session.id, claim);
    logger.warn(
      `purchase-auth: payment session ${session.id} changed while the reconcile job held its claim, before it could record the release of the service's order ${resolution.data.order_id}; nothing was released (the order is still held at the service), ${givenBack ? "the claim is given back and the next run resends the key again if the session is still unknown" : "and the claim was no longer the job's"}`,
    );
    report.stillUnknown.push(session.id);
    return;
  }
  const data = writeData({ ...resolution.data, ...UNCLAIMED });
  if (!(await replaceSessionDataIfUnchanged(knexOf(container), session.id, written, data))) {
    if (resolution.kind !== "released") {
      logger.warn(
        `purchase-auth: payment session ${session.id} changed while the reconcile job held its claim; what it learned (${resolution.kind}) is not written over it, the next run looks at it again if it is still unknown`,
      );
      return;
    }
    if (await settledMeanwhile(container, session.id, resolution.data.order_id)) {
      logger.info(
        `purchase-auth: payment session ${session.id} was deleted, or recorded canceled, while the reconcile job released the service's order ${resolution.data.order_id}; nothing is left to record`,
      );
      report.resolved.push(session.id);
      return;
    }
    logger.error(
      `purchase-auth: payment session ${session.id} changed while the reconcile job held its claim (past its time limit?) after the job released the service's order ${resolution.data.order_id}; that is not recorded on the session, which is flagged for review`,
    );
    await flagReleased(container, session.id);
    report.flagged.push(session.id);
    return;
  }
  if (resolution.kind === "released" && readData(claimed).review_reason) {
    logger.info(
      `purchase-auth: payment session ${session.id}: the reconcile job released the service's order ${resolution.data.order_id} at last; the session is canceled and no longer needs review`,
    );
  }
  if (resolution.kind !== "still_unknown") report.resolved.push(session.id);
  else if (resolution.data.review_reason) {
    report.flagged.push(session.id);
    logger.error(
      `purchase-auth: payment session ${session.id} needs review: ${resolution.data.review_reason}`,
    );
  } else report.stillUnknown.push(session.id);
}

/**
 * True when a session whose final write failed after the job released its order needs nobody: Medusa
 * deleted it meanwhile (deletePayment repeats a releasing session's release with the same keys), or
 * someone else already recorded the same order canceled (a webhook, deletePayment).
 */
async function settledMeanwhile(
  container: MedusaContainer,
  sessionId: string,
  orderId: string | null,
): Promise<boolean> {
  const now = await sessionRowAnyState(knexOf(container), sessionId);
  if (!now || now.deleted) return true;
  return now.data.state === "canceled" && orderId !== null && now.data.order_id === orderId;
}

/**
 * How long the job repeats a failing release before a person is asked to look. An outage of the
 * service is retried quietly (WARN) every run; past this, well beyond an ordinary outage and the
 * service's one-hour key window, the release likely fails for good (the service refuses it), and the
 * order's money stays held until someone settles it with the service.
 */
export const RELEASE_REVIEW_AFTER_MS = 4 * 60 * 60_000;

export const RELEASE_STUCK =
  "The reconcile job has been failing to release the service's order of this session (its outcome was unknown and the cart did not complete) for more than 4 hours: look at the job's WARN lines for why, and check the order at the service (cancel or refund it there if it cannot be released). The job keeps repeating the release every run, records the session canceled once it succeeds, and clears this flag.";

/**
 * A releasing session whose release failed again, begun more than RELEASE_REVIEW_AFTER_MS before
 * `now`: flagged for review and its claim given back (one guarded write), with an ERROR line, once.
 * The job goes on reading it (lookups.ts) and repeating the release every run, so once the service
 * answers again the order is released and the flag cleared. False when it is younger, already
 * flagged, or the session changed meanwhile (then the usual WARN path applies).
 */
async function flaggedStuckRelease(
  container: MedusaContainer,
  sessionId: string,
  written: Record<string, unknown>,
  now: Date,
  error: Error,
): Promise<boolean> {
  const data = readData(written);
  if (!isReleasing(data) || !data.release_started_at || data.review_reason) return false;
  if (Date.parse(data.release_started_at) > now.getTime() - RELEASE_REVIEW_AFTER_MS) return false;
  const flagged = { ...written, ...UNCLAIMED, review_reason: RELEASE_STUCK };
  if (!(await replaceSessionDataIfUnchanged(knexOf(container), sessionId, written, flagged))) return false;
  container
    .resolve(ContainerRegistrationKeys.LOGGER)
    .error(
      `purchase-auth: payment session ${sessionId} needs review: releasing the service's order ${data.order_id} (begun ${data.release_started_at}) failed again: ${error.message}. ${RELEASE_STUCK}`,
    );
  return true;
}

export const RELEASED_UNRECORDED =
  "The reconcile job released the service's order of this session (its outcome was unknown), but the session changed before that could be written: check the service's order and Medusa's payment.";

/** Flags the session for review, whatever it holds now (one statement). */
async function flagReleased(container: MedusaContainer, sessionId: string): Promise<void> {
  await knexOf(container).raw(
    `update payment_session set data = data || jsonb_build_object('review_reason', ?::text), updated_at = now()
     where id = ?`,
    [RELEASED_UNRECORDED, sessionId],
  );
}
