import type { MedusaContainer } from "@medusajs/framework/types";
import { knexOf } from "./lookups";

// The reconcile job reads a session, calls the service (seconds, perhaps more), then writes what it
// learned. The payment module's update replaces the whole data with no check, so a webhook processed
// in between (an authorization.succeeded writing the order id) would be undone by that write: a lost
// update. This write happens only while the session still holds what was read.

/**
 * Replaces the data of payment session `sessionId` with `data`, in one statement, only while its
 * stored data still equals `read` (what the caller read before its network call) and it is not
 * deleted. True when written; false when anything changed it meanwhile (then nothing is written, and
 * the caller reads it again later). `updated_at` becomes now, as with the module's update.
 */
export async function replaceSessionDataIfUnchanged(
  container: MedusaContainer,
  sessionId: string,
  read: Record<string, unknown> | null,
  data: Record<string, unknown>,
): Promise<boolean> {
  const { rows } = await knexOf(container).raw(
    `update payment_session set data = ?::jsonb, updated_at = now()
     where id = ? and deleted_at is null and data is not distinct from ?::jsonb
     returning id`,
    [JSON.stringify(data), sessionId, read === null ? null : JSON.stringify(read)],
  );
  return rows.length > 0;
}
