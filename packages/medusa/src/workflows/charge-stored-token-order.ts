import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, MedusaError } from "@medusajs/framework/utils";
import type { CustomerTokenStatus } from "@purchase-auth/core";
import { type CartForOrderLines, ORDER_LINE_FIELDS } from "../providers/purchase-auth/order-lines";
import { isPurchaseAuthProviderId } from "../providers/purchase-auth/provider-ids";
import { purchaseAuthProvider } from "../providers/purchase-auth/provider-instance";
import { declineReasonOfTokenStatus } from "../providers/purchase-auth/status-mapping";
import { isUsable, readAccountHolderData } from "../providers/purchase-auth/stored-tokens";

// What the charge workflow reads: the order with its payment collections, and the token to charge.

export interface ChargeSessionRow {
  id: string;
  provider_id: string;
  status: string;
  amount: unknown;
  raw_amount?: unknown;
  currency_code: string;
  data: Record<string, unknown> | null;
  created_at: string | Date;
}

export interface ChargePaymentRow {
  id: string;
  provider_id: string;
  amount: unknown;
  currency_code: string;
  data: Record<string, unknown> | null;
  payment_session_id?: string | null;
  canceled_at: string | Date | null;
  captured_at: string | Date | null;
}

export interface ChargeCollectionRow {
  id: string;
  status: string;
  amount: unknown;
  currency_code: string;
  payment_sessions?: Array<ChargeSessionRow | null> | null;
  payments?: Array<ChargePaymentRow | null> | null;
}

export type OrderToCharge = CartForOrderLines & {
  id: string;
  status: string;
  is_draft_order?: boolean | null;
  customer_id: string | null;
  currency_code: string;
  total: unknown;
  summary?: { pending_difference?: unknown; raw_pending_difference?: unknown } | null;
  payment_collections?: Array<ChargeCollectionRow | null> | null;
};

const ORDER_FIELDS = [
  "id",
  "status",
  "is_draft_order",
  "customer_id",
  "currency_code",
  // Asking for the total makes Medusa compute the line, shipping and pending totals too.
  "total",
  "summary",
  ...ORDER_LINE_FIELDS,
  "payment_collections.id",
  "payment_collections.status",
  "payment_collections.amount",
  "payment_collections.currency_code",
  "payment_collections.payment_sessions.id",
  "payment_collections.payment_sessions.provider_id",
  "payment_collections.payment_sessions.status",
  "payment_collections.payment_sessions.amount",
  "payment_collections.payment_sessions.raw_amount",
  "payment_collections.payment_sessions.currency_code",
  "payment_collections.payment_sessions.data",
  "payment_collections.payment_sessions.created_at",
  "payment_collections.payments.id",
  "payment_collections.payments.provider_id",
  "payment_collections.payments.amount",
  "payment_collections.payments.currency_code",
  "payment_collections.payments.data",
  "payment_collections.payments.payment_session_id",
  "payment_collections.payments.canceled_at",
  "payment_collections.payments.captured_at",
];

/** The order with its payment collections (NOT_FOUND when there is no such order). */
export async function readOrderToCharge(container: MedusaContainer, orderId: string): Promise<OrderToCharge> {
  const query = container.resolve(ContainerRegistrationKeys.QUERY);
  const { data } = await query.graph({ entity: "order", fields: ORDER_FIELDS, filters: { id: orderId } });
  const order = data[0] as OrderToCharge | undefined;
  if (!order) throw new MedusaError(MedusaError.Types.NOT_FOUND, `Order with id: ${orderId} was not found`);
  return order;
}

/** The order's collections, sessions (newest first) and payments, without nulls. */
export function paymentRecordsOf(order: OrderToCharge) {
  const collections = (order.payment_collections ?? []).filter((c): c is ChargeCollectionRow => !!c);
  const sessions = collections
    .flatMap((c) => (c.payment_sessions ?? []).map((s) => (s ? { ...s, collection_id: c.id } : null)))
    .filter((s): s is ChargeSessionRow & { collection_id: string } => !!s)
    .sort((a, b) => new Date(b.created_at).getTime() - new Date(a.created_at).getTime());
  const payments = collections
    .flatMap((c) => (c.payments ?? []).map((p) => (p ? { ...p, collection_id: c.id } : null)))
    .filter((p): p is ChargePaymentRow & { collection_id: string } => !!p);
  return { collections, sessions, payments };
}

export type TokenChoice =
  | { kind: "token"; customer_token: string }
  /** The token cannot be charged: the service's reason (the token's status, or its currency). */
  | { kind: "refused"; customer_token: string; reason: string };

/**
 * The customer token to charge: the one asked for (it must be stored for this customer), else the
 * customer's most recently stored token in the order's currency that the service has not flagged.
 * A flagged token is refused with the reason of its status; the service is asked about the token
 * chosen, so a revocation whose webhook has not arrived yet is caught before any charge. A customer
 * with no stored token (in this currency) is NOT_ALLOWED (HTTP 400).
 */
export async function chooseTokenToCharge(
  container: MedusaContainer,
  input: { customer_id: string; provider_id: string; currency_code: string; customer_token?: string },
): Promise<TokenChoice> {
  const query = container.resolve(ContainerRegistrationKeys.QUERY);
  const { data } = await query.graph({
    entity: "customer",
    fields: ["id", "account_holders.*"],
    filters: { id: input.customer_id },
  });
  const customer = data[0] as
    | { account_holders?: Array<{ provider_id: string; data: Record<string, unknown> | null } | null> }
    | undefined;
  if (!customer) {
    throw new MedusaError(
      MedusaError.Types.NOT_FOUND,
      `Customer with id: ${input.customer_id} was not found`,
    );
  }
  const holder = (customer.account_holders ?? []).find((h) => h?.provider_id === input.provider_id);
  const tokens = readAccountHolderData(holder?.data).customer_tokens;
  const currency = input.currency_code.toUpperCase();
  let chosen = tokens.filter((t) => t.currency === currency && isUsable(t)).at(-1);
  if (input.customer_token) {
    chosen = tokens.find((t) => t.customer_token === input.customer_token!.toLowerCase());
    if (!chosen) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        "The customer token given is not one of this customer's stored customer tokens.",
      );
    }
  }
  if (!chosen) {
    const flagged = tokens.filter((t) => t.currency === currency).at(-1);
    if (!flagged) {
      throw new MedusaError(
        MedusaError.Types.NOT_ALLOWED,
        tokens.length === 0
          ? "This customer has no stored customer token: attach one from the customer's initial checkout first."
          : `This customer has no stored customer token for ${currency}.`,
      );
    }
    chosen = flagged;
  }
  const flaggedReason = chosen.status
    ? declineReasonOfTokenStatus(chosen.status as CustomerTokenStatus)
    : undefined;
  if (flaggedReason) return { kind: "refused", customer_token: chosen.customer_token, reason: flaggedReason };
  if (!isPurchaseAuthProviderId(input.provider_id)) {
    throw new MedusaError(
      MedusaError.Types.INVALID_DATA,
      `${input.provider_id} is not a purchase-auth provider`,
    );
  }
  const live = await purchaseAuthProvider(container, input.provider_id).customerToken(chosen.customer_token);
  const reason =
    declineReasonOfTokenStatus(live.status) ?? (live.currency !== currency ? "INVALID_CURRENCY" : undefined);
  return reason
    ? { kind: "refused", customer_token: chosen.customer_token, reason }
    : { kind: "token", customer_token: chosen.customer_token };
}
