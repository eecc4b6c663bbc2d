import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import { OUTCOME_OVERDUE } from "../providers/purchase-auth/outcome-overdue";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { readData } from "../providers/purchase-auth/session-data";
import { knexOf, reconcilableSessionsInState, SESSION_PAGE_SIZE } from "./lookups";

// An authorization the service accepted (202) learns its outcome only by webhook, and the service
// has no call to read an authorization. If every webhook about it is lost, its session waits in
// "pending_authorization" for ever and its order stays awaiting payment. The reconcile job flags it
// for review once it is overdue: the provider's `outcomeGraceMs` after the later of the service's
// last scheduled attempt and the session's last news. Nothing else changes (no money, no status), so
// a webhook that still arrives moves the session on as it would have.

/**
 * Flags every overdue accepted session with `review_reason: "OUTCOME_OVERDUE"` and logs an ERROR
 * line naming it. Returns the sessions this call flagged: a session is flagged (and logged) once,
 * even by runs overlapping each other or a webhook.
 */
export async function flagOverdueOutcomes(
  container: MedusaContainer,
  now: Date,
  pageSize = SESSION_PAGE_SIZE,
): Promise<string[]> {
  const logger = container.resolve(ContainerRegistrationKeys.LOGGER);
  const flagged: string[] = [];
  for await (const session of reconcilableSessionsInState(container, "pending_authorization", pageSize)) {
    let overdueAt: number;
    try {
      overdueAt = purchaseAuthProvider(container, session.provider_id).outcomeOverdueAt(
        session.data,
        new Date(session.updated_at),
      );
    } catch (error) {
      // A provider no longer configured: its sessions cannot be judged with its options.
      logger.warn(
        `purchase-auth: payment session ${session.id} is awaiting the service's outcome but could not be checked: ${(error as Error).message}`,
      );
      continue;
    }
    if (now.getTime() < overdueAt || !(await flagOnce(container, session.id))) continue;
    flagged.push(session.id);
    const authorizationId = readData(session.data ?? undefined).authorization_id;
    logger.error(
      `purchase-auth: payment session ${session.id} needs review: ${OUTCOME_OVERDUE}: the service accepted its authorization${authorizationId ? ` ${authorizationId}` : ""}, but no webhook told the outcome by ${new Date(overdueAt).toISOString()} (deliveries may have been lost); Medusa records no payment for it (its order awaits payment, or its cart never completed). Ask the service about the authorization, and have it cancelled there before taking another payment; a webhook that still arrives moves the session on (its order is released if the payment collection was paid another way meanwhile).`,
    );
  }
  return flagged;
}

/**
 * Sets the review reason in one statement that re-checks the session is still accepted and unflagged:
 * true for the one call that flagged it. Writing the whole data through the payment module (read,
 * then write) could undo a webhook that moved the session on in between; this merges one key.
 */
async function flagOnce(container: MedusaContainer, sessionId: string): Promise<boolean> {
  const { rows } = await knexOf(container).raw(
    `update payment_session
     set data = data || jsonb_build_object('review_reason', ?::text), updated_at = now()
     where id = ? and deleted_at is null and data->>'state' = 'pending_authorization'
       and coalesce(data->>'review_reason', '') = ''
     returning id`,
    [OUTCOME_OVERDUE, sessionId],
  );
  return rows.length > 0;
}
