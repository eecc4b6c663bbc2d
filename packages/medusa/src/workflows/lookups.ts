import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys } from "@medusajs/framework/utils";

// Lookups by the service's ids inside the JSON data the payment module keeps. The module's API
// cannot filter on data, so these read its tables directly (PostgreSQL jsonb), only this provider's
// rows, never deleted ones.

export interface Knex {
  raw(sql: string, bindings: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
}

const OURS = "pp_purchase-auth%";

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

export interface SessionRow {
  id: string;
  provider_id: string;
  payment_collection_id: string;
  status: string;
  data: Record<string, unknown> | null;
  amount: unknown;
  currency_code: string;
}

/** This provider's payment sessions whose data is in `state`. */
export async function sessionsInState(
  container: MedusaContainer,
  state: string,
  limit = 100,
): Promise<SessionRow[]> {
  const { rows } = await knexOf(container).raw(
    `select id, provider_id, payment_collection_id, status, data, amount, currency_code from payment_session
     where provider_id like ? and deleted_at is null and data->>'state' = ? order by created_at limit ?`,
    [OURS, state, limit],
  );
  return rows as unknown as SessionRow[];
}

export interface AcceptedSessionRow {
  id: string;
  provider_id: string;
  data: Record<string, unknown> | null;
  /** The session's last change: its last news. */
  updated_at: Date;
}

/**
 * This provider's payment sessions the service accepted (202) and nobody flagged for review yet, in
 * id order after `afterId` (pages of `limit`: every such session is seen, however many wait).
 */
export async function acceptedSessionsUnflagged(
  container: MedusaContainer,
  afterId: string,
  limit = 100,
): Promise<AcceptedSessionRow[]> {
  const { rows } = await knexOf(container).raw(
    `select id, provider_id, data, updated_at from payment_session
     where provider_id like ? and deleted_at is null and data->>'state' = 'pending_authorization'
       and coalesce(data->>'review_reason', '') = '' and id > ? order by id limit ?`,
    [OURS, afterId, limit],
  );
  return rows as unknown as AcceptedSessionRow[];
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
