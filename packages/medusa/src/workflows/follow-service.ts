import type { IPaymentModuleService, Logger, MedusaContainer } from "@medusajs/framework/types";
import {
  ContainerRegistrationKeys,
  MedusaError,
  Modules,
  PaymentCollectionStatus,
} from "@medusajs/framework/utils";
import { formatCents, toCents } from "@purchase-auth/core";
import { sumExact, toCentsRounded } from "../providers/purchase-auth/amounts";
import { describeReason } from "../providers/purchase-auth/errors";
import { RECORDED_BY_PLUGIN } from "../providers/purchase-auth/payment-module-records";
import { isPurchaseAuthProviderId } from "../providers/purchase-auth/provider-ids";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { readData, writeData } from "../providers/purchase-auth/session-data";
import { type Knex, markSessionOrderCanceled, paidOtherwise } from "../providers/purchase-auth/session-sql";
import {
  readAccountHolderData,
  TOKEN_NOT_FOUND,
  withTokenStatus,
} from "../providers/purchase-auth/stored-tokens";
import { markOrderCanceled, releaseCanceledOrderPayment } from "./canceled-orders";
import { accountHoldersWithToken, paymentsOfServiceOrder } from "./lookups";
import { recordOrderTransactions } from "./order-transactions";
import { withPaymentLock } from "./payment-lock";

// Medusa follows the service: what the service's events (and the reconciler) report is applied to
// Medusa's payments, sessions, orders and stored tokens. The service is the source of truth; these
// functions only move Medusa's records towards it, and are safe to run twice.

function logger(container: MedusaContainer): Logger {
  return container.resolve(ContainerRegistrationKeys.LOGGER);
}

/**
 * A Medusa order was canceled. Medusa cancels at the provider only payments without captures and
 * refunds the captured ones, which leaves the uncaptured remainder of a partly captured payment
 * reserved: it is released here. A payment without captures whose cancel failed (Medusa logs it and
 * cancels the order anyway) is canceled again, and money the service captured without Medusa's
 * records showing it is refunded (see canceled-orders.ts; the reconcile job repeats what fails). A session still waiting for the service (202) is marked, so its
 * late success is voided when it arrives instead of becoming a payment of a canceled order.
 */
export async function followCanceledOrder(container: MedusaContainer, orderId: string): Promise<void> {
  const query = container.resolve(ContainerRegistrationKeys.QUERY);
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const { data } = await query.graph({
    entity: "order",
    fields: [
      "id",
      "payment_collections.payments.id",
      "payment_collections.payments.provider_id",
      "payment_collections.payments.data",
      "payment_collections.payments.canceled_at",
      "payment_collections.payments.captures.id",
      "payment_collections.payment_sessions.id",
      "payment_collections.payment_sessions.provider_id",
      "payment_collections.payment_sessions.status",
      "payment_collections.payment_sessions.data",
      "payment_collections.payment_sessions.amount",
      "payment_collections.payment_sessions.raw_amount",
      "payment_collections.payment_sessions.currency_code",
    ],
    filters: { id: orderId },
  });
  const order = data[0] as
    | {
        payment_collections?: Array<{
          payments?: Array<{
            id: string;
            provider_id: string;
            data: Record<string, unknown> | null;
            canceled_at?: unknown;
            captures?: unknown[];
          } | null>;
          payment_sessions?: Array<{
            id: string;
            provider_id: string;
            status: string;
            data: Record<string, unknown> | null;
            amount: unknown;
            raw_amount?: unknown;
            currency_code: string;
          } | null>;
        } | null>;
      }
    | undefined;
  const knex = container.resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as Knex;
  for (const collection of order?.payment_collections ?? []) {
    const sessions = (collection?.payment_sessions ?? []).filter(
      (session) => session && isPurchaseAuthProviderId(session.provider_id),
    );
    // Sessions first: one still waiting for the service (202) is marked, so its late success is
    // voided. One statement merges the mark: a success merged since the query read the session stays.
    for (const session of sessions) {
      const current = readData(session!.data ?? undefined);
      if (current.state === "pending_authorization" && !current.medusa_canceled_at)
        await markSessionOrderCanceled(knex, session!.id);
    }
    // Then the payments, read again: a success Medusa authorized since the query may have recorded
    // one. Each is marked first (should its release fail now, the reconcile job repeats it).
    const ids = new Set((collection?.payments ?? []).flatMap((entry) => (entry ? [entry.id] : [])));
    const sessionIds = sessions.map((session) => session!.id);
    const fresh = [
      ...(ids.size > 0 ? await payment.listPayments({ id: [...ids] }) : []),
      ...(sessionIds.length > 0 ? await payment.listPayments({ payment_session_id: sessionIds }) : []),
    ];
    const live = new Map(
      fresh
        .filter((entry) => isPurchaseAuthProviderId(entry.provider_id) && !entry.canceled_at)
        .map((entry) => [entry.id, entry]),
    );
    for (const id of live.keys()) await markOrderCanceled(container, id);
    for (const id of live.keys()) await releaseCanceledOrderPayment(container, `order ${orderId}`, id);
  }
}

/**
 * An authorization failed asynchronously (after 202): the order was placed and waits for its
 * payment. The payment collection is marked failed and the order's metadata says why, so the
 * merchant sees it and nothing waits forever; unless the collection was paid another way meanwhile
 * (paidOtherwise, the rule a late success follows): then only the session reads failed.
 */
export async function followFailedAuthorization(
  container: MedusaContainer,
  sessionId: string,
  reason: string,
): Promise<void> {
  const query = container.resolve(ContainerRegistrationKeys.QUERY);
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const { data: sessions } = await query.graph({
    entity: "payment_session",
    fields: ["id", "provider_id", "payment_collection_id", "data", "status"],
    filters: { id: sessionId },
  });
  const session = sessions[0] as
    | { id: string; provider_id: string; payment_collection_id: string }
    | undefined;
  if (!session || !isPurchaseAuthProviderId(session.provider_id)) return;
  const knex = container.resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as Knex;
  if (await paidOtherwise(knex, sessionId)) {
    // Paid another way meanwhile (another session's payment in the collection holds the money):
    // the session alone failed; the collection and the order must not read failed.
    logger(container).info(
      `purchase-auth: the authorization of payment session ${sessionId} failed at the service (${describeReason(reason)}); its payment collection was paid another way and is left as it is`,
    );
    return;
  }
  const { data: collections } = await query.graph({
    entity: "payment_collection",
    fields: ["id", "order.id", "order.metadata"],
    filters: { id: session.payment_collection_id },
  });
  const order = (
    collections[0] as { order?: { id: string; metadata?: Record<string, unknown> | null } | null } | undefined
  )?.order;
  if (order) {
    await container.resolve(Modules.ORDER).updateOrders(order.id, {
      metadata: {
        ...(order.metadata ?? {}),
        purchase_auth_payment_failed: {
          payment_session_id: sessionId,
          reason,
          description: describeReason(reason),
          at: new Date().toISOString(),
        },
      },
    });
  }
  // The collection's status is written last: whoever sees it failed also finds the reason.
  await payment.updatePaymentCollections(session.payment_collection_id, {
    status: PaymentCollectionStatus.FAILED,
  });
  logger(container).warn(
    `purchase-auth: the authorization of payment session ${sessionId} failed at the service (${describeReason(reason)}); its payment collection is marked failed`,
  );
}

/**
 * The service's order changed (captured, refunded, cancelled or expired). Medusa's payment is
 * brought to the service's figures: money the service captured or refunded without Medusa is
 * recorded through Medusa's own capture and refund (the provider counts them as done, nothing is
 * sent), a cancelled or expired order with nothing captured cancels the payment, and the payment's
 * data gets the service's amounts and status.
 */
export async function followServiceOrder(container: MedusaContainer, serviceOrderId: string): Promise<void> {
  for (const row of await paymentsOfServiceOrder(container, serviceOrderId)) {
    await withPaymentLock(container, row.id, () => followServicePayment(container, row));
  }
}

/**
 * followServiceOrder for one payment. The caller holds its lock (withPaymentLock): Medusa's records
 * are read here, after it was taken, so a capture or refund recorded by whoever held it before is
 * seen and not sent again.
 */
export async function followServicePayment(
  container: MedusaContainer,
  row: { id: string; provider_id: string; data: Record<string, unknown> | null },
): Promise<void> {
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  const provider = purchaseAuthProvider(container, row.provider_id);
  const order = await provider.serviceOrder(row.data);
  if (!order) return;
  const stored = await payment.retrievePayment(row.id, {
    select: ["id", "amount", "raw_amount", "canceled_at", "captured_at", "data"],
    relations: ["captures", "refunds"],
  });
  const recordedCaptured = toCentsRounded(
    sumExact((stored.captures ?? []).map((c) => c.raw_amount ?? c.amount)),
  );
  const recordedRefunded = toCentsRounded(
    sumExact((stored.refunds ?? []).map((r) => r.raw_amount ?? r.amount)),
  );
  const serviceCaptured = toCents(order.capturedAmount);
  const serviceRefunded = toCents(order.refundedAmount);
  if (!stored.canceled_at && serviceCaptured > recordedCaptured) {
    await payment.capturePayment({
      payment_id: row.id,
      amount: formatCents(serviceCaptured - recordedCaptured),
      captured_by: RECORDED_BY_PLUGIN,
    });
  }
  if (serviceRefunded > recordedRefunded) {
    // The provider aims at the refunds Medusa then records, which is the service's figure: nothing
    // is sent.
    await payment.refundPayment({
      payment_id: row.id,
      amount: formatCents(serviceRefunded - recordedRefunded),
      created_by: RECORDED_BY_PLUGIN,
    });
  }
  // Recorded outside Medusa's workflows: the order counts them once they have their transactions.
  // Every follow, not only one that recorded something: a process stopped between a row and its
  // transaction leaves the row without one, and Medusa's next capture would give it its amount.
  await recordOrderTransactions(container, row.id);
  if (
    !stored.canceled_at &&
    serviceCaptured === 0n &&
    (order.status === "Cancelled" || order.status === "Expired") &&
    recordedCaptured === 0n
  ) {
    await payment.cancelPayment(row.id);
  }
  const latest = await payment.retrievePayment(row.id, { select: ["id", "data"] });
  await updatePaymentData(payment, row.id, writeData(await provider.refreshedData(latest.data)));
}

/**
 * A token's status changed at the service (customer-token.status-changed): every stored copy gets
 * the status the service reports now, read through its holder's provider, never the event's (events
 * arrive twice and out of order: a stale one must not move the status backwards). A token the
 * service no longer knows for that merchant (404) is stored TOKEN_NOT_FOUND, never picked. Should
 * the read fail, this throws and nothing is stored: the event bus delivers the event again where it
 * retries. `_reportedStatus`, the event's status, is not used.
 */
export async function followTokenStatus(
  container: MedusaContainer,
  customerToken: string,
  _reportedStatus?: string,
): Promise<void> {
  // One read per provider (a merchant's credentials) storing the token, before anything is written.
  const statuses = new Map<string, string>();
  for (const holder of await accountHoldersWithToken(container, customerToken)) {
    if (statuses.has(holder.provider_id)) continue;
    statuses.set(holder.provider_id, await serviceTokenStatus(container, holder.provider_id, customerToken));
  }
  const payment = container.resolve(Modules.PAYMENT) as IPaymentModuleService;
  // The holders read again after the service: the list written back is as fresh as before.
  for (const holder of await accountHoldersWithToken(container, customerToken)) {
    const status = statuses.get(holder.provider_id);
    if (status === undefined) continue;
    const next = withTokenStatus(readAccountHolderData(holder.data), customerToken, status);
    if (!next) continue;
    await payment.updateAccountHolder({
      id: holder.id,
      provider_id: holder.provider_id,
      context: {
        // The row as stored; the provider's updateAccountHolder keeps only the data it knows.
        account_holder: {
          id: holder.id,
          provider_id: holder.provider_id,
          external_id: holder.external_id,
          email: holder.email,
          data: { ...next },
          created_at: holder.created_at,
          updated_at: holder.updated_at,
          metadata: holder.metadata,
        } as unknown as Parameters<
          IPaymentModuleService["updateAccountHolder"]
        >[0]["context"]["account_holder"],
      },
    });
  }
}

/** The token's status at provider `providerId`'s service now, or TOKEN_NOT_FOUND when it answers 404. */
async function serviceTokenStatus(
  container: MedusaContainer,
  providerId: string,
  customerToken: string,
): Promise<string> {
  try {
    return (await purchaseAuthProvider(container, providerId).customerToken(customerToken)).status;
  } catch (error) {
    // The provider turns the service's 404 (and only it) into NOT_FOUND.
    if (MedusaError.isMedusaError(error) && error.type === MedusaError.Types.NOT_FOUND)
      return TOKEN_NOT_FOUND;
    throw error;
  }
}

/** The payment module stores a payment's data on update (its type leaves `data` out). */
async function updatePaymentData(
  payment: IPaymentModuleService,
  id: string,
  data: Record<string, unknown>,
): Promise<void> {
  await payment.updatePayment({ id, data } as Parameters<IPaymentModuleService["updatePayment"]>[0]);
}
