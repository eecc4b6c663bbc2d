import type { AuthenticatedMedusaRequest, MedusaResponse } from "@medusajs/framework/http";
import { ContainerRegistrationKeys, MedusaError } from "@medusajs/framework/utils";
import { isPurchaseAuthProviderId } from "../../../../../providers/purchase-auth/provider-ids";
import { readServicePaymentView } from "../../../../../providers/purchase-auth/service-view";
import type { ChargePaymentRow } from "../../../../../workflows/charge-stored-token-order";

interface SessionRow {
  id: string;
  provider_id: string;
  amount: unknown;
  currency_code: string;
  status: string;
  data: Record<string, unknown> | null;
}

interface OrderRow {
  id: string;
  payment_collections?: Array<{ payments?: ChargePaymentRow[]; payment_sessions?: SessionRow[] } | null>;
}

const FIELDS = [
  "id",
  "payment_collections.payments.id",
  "payment_collections.payments.provider_id",
  "payment_collections.payments.amount",
  "payment_collections.payments.currency_code",
  "payment_collections.payments.data",
  "payment_collections.payments.payment_session_id",
  "payment_collections.payments.captured_at",
  "payment_collections.payments.canceled_at",
  "payment_collections.payment_sessions.id",
  "payment_collections.payment_sessions.provider_id",
  "payment_collections.payment_sessions.amount",
  "payment_collections.payment_sessions.currency_code",
  "payment_collections.payment_sessions.status",
  "payment_collections.payment_sessions.data",
];

const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : value instanceof Date ? value.toISOString() : String(value);

/**
 * The service's view of an order's purchase-auth payments, read now: each payment, and each session
 * that never became a payment (an authorization still pending, or declined after a 202), with what
 * Medusa recorded beside what the service holds. For the admin's order widget.
 */
export async function GET(req: AuthenticatedMedusaRequest, res: MedusaResponse): Promise<void> {
  const query = req.scope.resolve(ContainerRegistrationKeys.QUERY);
  const { data } = await query.graph({ entity: "order", fields: FIELDS, filters: { id: req.params.id! } });
  const order = data[0] as OrderRow | undefined;
  if (!order) {
    throw new MedusaError(MedusaError.Types.NOT_FOUND, `Order with id: ${req.params.id} was not found`);
  }
  const collections = (order.payment_collections ?? []).filter((c) => !!c);
  const payments = collections.flatMap((c) => c.payments ?? []);
  const paid = new Set(payments.map((p) => p.payment_session_id).filter(Boolean));
  const sessions = collections
    .flatMap((c) => c.payment_sessions ?? [])
    .filter((s) => !paid.has(s.id) && isPurchaseAuthProviderId(s.provider_id));

  const views = await Promise.all([
    ...payments
      .filter((p) => isPurchaseAuthProviderId(p.provider_id))
      .map(async (p) => ({
        payment_id: p.id,
        payment_session_id: p.payment_session_id ?? null,
        medusa: {
          kind: "payment" as const,
          amount: text(p.amount),
          currency_code: p.currency_code,
          session_status: null,
          captured_at: text(p.captured_at),
          canceled_at: text(p.canceled_at),
        },
        ...(await readServicePaymentView(req.scope, p)),
      })),
    ...sessions.map(async (s) => ({
      payment_id: null,
      payment_session_id: s.id,
      medusa: {
        kind: "session" as const,
        amount: text(s.amount),
        currency_code: s.currency_code,
        session_status: s.status,
        captured_at: null,
        canceled_at: null,
      },
      ...(await readServicePaymentView(req.scope, s)),
    })),
  ]);
  res.json({ order_id: order.id, purchase_auth_payments: views });
}
