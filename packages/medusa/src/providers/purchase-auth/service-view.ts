// For the admin routes and widgets (engineer B). Signatures kept stable:
//
//   readServicePaymentView(container: MedusaContainer, payment: { provider_id: string; data?: Record<string, unknown> | null })
//     : Promise<ServicePaymentView>
//   readCustomerTokensLive(container: MedusaContainer, customerId: string)
//     : Promise<LiveCustomerToken[]>
//
// Both read the service (never cached); neither returns a secret.

import type { MedusaContainer } from "@medusajs/framework/types";
import type { Order } from "@purchase-auth/core";
import { type CustomerTokenView, listCustomerTokens } from "../../workflows/list-customer-tokens";
import { describeReason } from "./errors";
import { purchaseAuthProvider } from "./provider-instance";
import { readData } from "./session-data";

/** The service's view of one Medusa payment (or payment session) of this provider. */
export interface ServicePaymentView {
  provider_id: string;
  /** What Medusa recorded in the payment data. */
  recorded: {
    state: string | null;
    order_id: string | null;
    authorization_id: string | null;
    captured_amount: string | null;
    refunded_amount: string | null;
    failure_reason: string | null;
    /** The reason in words (specification section 7.2). */
    failure_description: string | null;
    review_reason: string | null;
    medusa_canceled_at: string | null;
  };
  /** The service's order, read now; null before the service created one. */
  service_order: Pick<
    Order,
    | "orderId"
    | "authorizationId"
    | "status"
    | "currency"
    | "totalAmount"
    | "capturedAmount"
    | "refundedAmount"
    | "cancelledAmount"
    | "captureMode"
  > | null;
  /** Set when the service's order could not be read (the error message, no secret). */
  service_error: string | null;
}

export async function readServicePaymentView(
  container: MedusaContainer,
  payment: { provider_id: string; data?: Record<string, unknown> | null },
): Promise<ServicePaymentView> {
  const data = readData(payment.data ?? undefined);
  const recorded = {
    state: data.state,
    order_id: data.order_id,
    authorization_id: data.authorization_id,
    captured_amount: data.captured_amount,
    refunded_amount: data.refunded_amount,
    failure_reason: data.failure_reason,
    failure_description: data.failure_reason ? describeReason(data.failure_reason) : null,
    review_reason: data.review_reason,
    medusa_canceled_at: data.medusa_canceled_at,
  };
  let order: Order | undefined;
  try {
    order = await purchaseAuthProvider(container, payment.provider_id).serviceOrder(payment.data);
  } catch (error) {
    return {
      provider_id: payment.provider_id,
      recorded,
      service_order: null,
      service_error: (error as Error).message,
    };
  }
  return {
    provider_id: payment.provider_id,
    recorded,
    service_order: order
      ? {
          orderId: order.orderId,
          authorizationId: order.authorizationId,
          status: order.status,
          currency: order.currency,
          totalAmount: order.totalAmount,
          capturedAmount: order.capturedAmount,
          refundedAmount: order.refundedAmount,
          cancelledAmount: order.cancelledAmount,
          captureMode: order.captureMode,
        }
      : null,
    service_error: null,
  };
}

/** A stored token with its live status at the service. */
export interface LiveCustomerToken extends CustomerTokenView {
  /** The service's status now (Active, Revoked, ...), or null when it could not be read. */
  live_status: string | null;
  /** Set when the status could not be read (e.g. unknown to the service: 404). */
  live_error: string | null;
}

export async function readCustomerTokensLive(
  container: MedusaContainer,
  customerId: string,
): Promise<LiveCustomerToken[]> {
  const tokens = await listCustomerTokens(container, customerId);
  return await Promise.all(
    tokens.map(async (token) => {
      try {
        const live = await purchaseAuthProvider(container, token.provider_id).customerToken(
          token.customer_token,
        );
        return { ...token, live_status: live.status, live_error: null };
      } catch (error) {
        return { ...token, live_status: null, live_error: (error as Error).message };
      }
    }),
  );
}
