import { MedusaError } from "@medusajs/framework/utils";
import type { AuthorizationOutcome } from "./authorization";
import type { ProviderContext } from "./provider-context";
import { isReleasing, type PurchaseAuthData } from "./session-data";
import type { ResendClaim } from "./session-sql";

export const NO_CLAIM = { resend_claimed_at: null, resend_claimed_by: null } as const;

/**
 * Repeating an unknown attempt's key moves money (a replayed 200 is an order) and so does the
 * reconcile job's resend (it releases the order it finds): only one of them may send it. The
 * checkout claims the resend in one guarded statement (session-sql.ts) and gives up, asking for a
 * retry, when the session moved on since Medusa read it or the job is resending it now. Medusa
 * writes the data returned, without the claim.
 */
export async function claimedForCheckout(
  context: ProviderContext,
  data: PurchaseAuthData,
  sessionId: string,
): Promise<{ data: PurchaseAuthData; claim: ResendClaim }> {
  const claim = await context.records.claimResend(sessionId, data.authorize_attempt ?? 1, "checkout");
  if (!claim) {
    throw new MedusaError(
      MedusaError.Types.CONFLICT,
      "This payment's earlier authorization attempt is being settled right now; try again in a moment.",
    );
  }
  return { data: { ...data, ...NO_CLAIM }, claim };
}

/**
 * A claim older than RESEND_CLAIM_TTL_MS counts as abandoned: a checkout that stalled that long may
 * find, once its resend answers, that the job took the claim over, resent the same key and released
 * (cancelled) the very order the replayed 200 now names. Returning that as authorized would make
 * Medusa record a payment for a cancelled order, so the checkout refuses unless its claim is still
 * the one on the session (checked with the row locked). Medusa keeps no data of a provider that
 * throws: what the job wrote stays.
 */
export async function refuseUnlessClaimStillHeld(
  context: ProviderContext,
  sessionId: string,
  claim: ResendClaim,
  outcome: Exclude<AuthorizationOutcome, { kind: "declined" }>,
): Promise<void> {
  const confirmed = await context.records.confirmClaim(sessionId, claim);
  if (confirmed?.held) return;
  const stored = confirmed?.data;
  if (stored && settledByItsWebhook(stored, claim, outcome)) {
    // Still refused: Medusa recorded the webhook's payment already, and would create a second one.
    context.logger?.info(
      `purchase-auth: payment session ${sessionId}: a checkout's resend of authorization attempt ${outcome.attempt} found the session ${stored.state} for the service's order ${stored.order_id}, settled by its webhook meanwhile; the checkout does not authorize it again (Medusa has its payment)`,
    );
    throw new MedusaError(
      MedusaError.Types.CONFLICT,
      "This payment was authorized meanwhile; complete the cart again.",
    );
  }
  const orderId =
    (outcome.kind === "done" ? outcome.result.orderId : undefined) ?? stored?.order_id ?? "none known";
  context.logger?.error(
    `purchase-auth: payment session ${sessionId}: a checkout's resend of authorization attempt ${outcome.attempt} answered after its claim (taken at ${claim.at}) was taken over; the session now reads ${stored ? `state ${stored.state}${isReleasing(stored) ? " (releasing)" : ""}` : "deleted"}, so the checkout does not authorize it. Check the service's order ${orderId} (actionReference = the session id): the reconcile job releases what it found.`,
  );
  if (!stored || stored.state === "canceled" || isReleasing(stored)) {
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      "This payment was canceled; start a new payment session.",
    );
  }
  throw new MedusaError(
    MedusaError.Types.CONFLICT,
    "This payment's earlier authorization attempt is being settled right now; try again in a moment.",
  );
}

/**
 * True when the checkout's claim was never taken over (still on the session, as the checkout wrote
 * it) and the session reads authorized (or captured) for the very order the resend names: the
 * original authorization.succeeded webhook settled it while the checkout resent. Nothing to check.
 */
function settledByItsWebhook(
  stored: PurchaseAuthData,
  claim: ResendClaim,
  outcome: Exclude<AuthorizationOutcome, { kind: "declined" }>,
): boolean {
  return (
    stored.resend_claimed_at === claim.at &&
    stored.resend_claimed_by === claim.by &&
    (stored.state === "authorized" || stored.state === "captured") &&
    outcome.kind === "done" &&
    !!outcome.result.orderId &&
    stored.order_id === outcome.result.orderId
  );
}

/**
 * A declined attempt: Medusa keeps no data of a provider that throws, so the next attempt number is
 * saved directly, and a checkout that claimed the resend gives its claim back. Both in one statement
 * guarded on the checkout's own claim: a checkout stalled past RESEND_CLAIM_TTL_MS may find the
 * reconcile job holding the claim it took over, and clearing it would let checkouts and webhooks in
 * while the job resends, and make the job's final write (guarded on what it claimed) fail. Then
 * nothing is written: the job gets the same decline for the same key and records it.
 */
export async function recordDecline(
  context: ProviderContext,
  sessionId: string,
  claim: ResendClaim | undefined,
  decline: Pick<PurchaseAuthData, "authorize_attempt" | "failure_reason">,
): Promise<void> {
  if (!claim) {
    await context.records.mergeSessionData(sessionId, decline);
    return;
  }
  if (await context.records.giveClaimBack(sessionId, claim, decline)) return;
  context.logger?.warn(
    `purchase-auth: payment session ${sessionId}: a checkout's resend was declined after its claim (taken at ${claim.at}) was taken over; the decline is left for whoever holds the claim now to record`,
  );
}
