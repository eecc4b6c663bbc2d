import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";
import type { Knex } from "../providers/purchase-auth/session-sql";

// Lookups by the service's ids inside the JSON data the payment module keeps. The module's API
// cannot filter on data, so these read its tables directly (PostgreSQL jsonb), only this provider's
// rows, never deleted ones.

export type { Knex };

export const OURS = "pp_purchase-auth%";

export function knexOf(container: MedusaContainer): Knex {
  return container.resolve(ContainerRegistrationKeys.PG_CONNECTION) as unknown as Knex;
}

export interface PaymentRow {
  id: string;
  provider_id: string;
  payment_collection_id: string;
  data: Record<string, unknown> | null;
  canceled_at: Date | null;
}

/** This provider's payments whose data names the service's order `orderId`. */
export async function paymentsOfServiceOrder(
  container: MedusaContainer,
  orderId: string,
): Promise<PaymentRow[]> {
  const { rows } = await knexOf(container).raw(
    `select id, provider_id, payment_collection_id, data, canceled_at from payment
     where provider_id like ? and deleted_at is null and data->>'order_id' = ?`,
    [OURS, orderId],
  );
  return rows as unknown as PaymentRow[];
}

/** How many payment sessions one query of the reconcile job reads. */
export const SESSION_PAGE_SIZE = 100;

export interface SessionRow {
  id: string;
  provider_id: string;
  payment_collection_id: string;
  status: string;
  data: Record<string, unknown> | null;
  amount: unknown;
  currency_code: string;
  /** The session's last change: its last news. */
  updated_at: Date;
}

/**
 * Every payment session of this provider whose data is in `state` and that nobody flagged for review
 * (`review_reason`), in id order (Medusa's ids grow with time: about oldest first), read `pageSize`
 * at a time after the last id seen. Flagged sessions are not read, so they cannot hide the others,
 * except a releasing one (see isReleasing): the service may hold its order's money and nobody in
 * Medusa releases it, so the job repeats its release every run, flagged or not, until it is known. A
 * session changing while the pages are read never shifts them. One changed into `state` behind the
 * last id read is seen by the next run.
 */
export async function* reconcilableSessionsInState(
  container: MedusaContainer,
  state: string,
  pageSize = SESSION_PAGE_SIZE,
): AsyncGenerator<SessionRow> {
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError(`pageSize must be a whole number from 1: ${pageSize}`);
  const knex = knexOf(container);
  let afterId = "";
  for (;;) {
    const { rows } = await knex.raw(
      `select id, provider_id, payment_collection_id, status, data, amount, currency_code, updated_at
       from payment_session
       where provider_id like ? and deleted_at is null and data->>'state' = ?
         and (coalesce(data->>'review_reason', '') = ''
              or (data->>'state' = 'unknown' and data->>'release_started_at' is not null
                  and data->>'order_id' is not null))
         and id > ?
       order by id limit ?`,
      [OURS, state, afterId, pageSize],
    );
    yield* rows as unknown as SessionRow[];
    if (rows.length < pageSize) return;
    afterId = rows[rows.length - 1]!.id as string;
  }
}

export interface AccountHolderRow {
  id: string;
  provider_id: string;
  external_id: string;
  email: string | null;
  data: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  metadata: Record<string, unknown> | null;
}

/** This provider's account holders holding `customerToken` (lower case, as stored). */
export async function accountHoldersWithToken(
  container: MedusaContainer,
  customerToken: string,
): Promise<AccountHolderRow[]> {
  const { rows } = await knexOf(container).raw(
    `select * from account_holder
     where provider_id like ? and deleted_at is null and data->'customer_tokens' @> ?::jsonb`,
    [OURS, JSON.stringify([{ customer_token: customerToken.toLowerCase() }])],
  );
  return rows as unknown as AccountHolderRow[];
}

/** This provider's account holders of customer `customerId` (their id at the provider). */
export async function accountHoldersOfCustomer(
  container: MedusaContainer,
  customerId: string,
): Promise<AccountHolderRow[]> {
  const { rows } = await knexOf(container).raw(
    `select * from account_holder
     where provider_id like ? and deleted_at is null and (external_id = ? or data->>'customer_id' = ?)`,
    [OURS, customerId, customerId],
  );
  return rows as unknown as AccountHolderRow[];
}

/**
 * The order a payment collection belongs to, when it was created for an order (a merchant-initiated
 * charge) rather than for a cart; undefined otherwise. Reads Medusa's order–payment-collection link.
 */
export async function orderOfPaymentCollection(
  container: MedusaContainer,
  paymentCollectionId: string,
): Promise<string | undefined> {
  const { rows } = await knexOf(container).raw(
    `select order_id from order_payment_collection
     where payment_collection_id = ? and deleted_at is null limit 1`,
    [paymentCollectionId],
  );
  return (rows[0]?.order_id as string | undefined) ?? undefined;
}

/** True when Medusa's order `orderId` is canceled (read from the order module's table). */
export async function orderIsCanceled(container: MedusaContainer, orderId: string): Promise<boolean> {
  const { rows } = await knexOf(container).raw(
    `select 1 from "order" where id = ? and status = 'canceled' and deleted_at is null limit 1`,
    [orderId],
  );
  return rows.length > 0;
}
