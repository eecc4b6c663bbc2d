import type { Logger } from "@medusajs/framework/types";
import { MedusaError } from "@medusajs/framework/utils";
import type { Order, PurchaseAuthClient } from "@purchase-auth/core";
import { logFieldsOf, toMedusaError } from "./errors";
import type { ResolvedProviderOptions } from "./options";
import type { PaymentModuleRecords } from "./payment-module-records";
import type { PurchaseAuthData } from "./session-data";
import { stateOfOrder } from "./status-mapping";

/** What every part of the provider works with: configuration, the client, the log, Medusa's records. */
export interface ProviderContext {
  readonly options: ResolvedProviderOptions;
  readonly client: PurchaseAuthClient;
  readonly logger: Logger | undefined;
  readonly records: PaymentModuleRecords;
}

/** Logs a failed call (reason, status, request id; never a secret) and returns the Medusa error. */
export function fail(
  context: ProviderContext,
  operation: string,
  error: unknown,
  fields: Record<string, unknown>,
): Error {
  context.logger?.error(
    `purchase-auth: ${operation} failed ${JSON.stringify({ ...fields, ...logFieldsOf(error) })}`,
  );
  return toMedusaError(operation, error);
}

/** The service's order (its view of the money), or a Medusa error saying why it cannot be read. */
export async function readOrder(context: ProviderContext, orderId: string): Promise<Order> {
  try {
    return await context.client.orders.get(orderId);
  } catch (error) {
    throw fail(context, "Reading the order", error, { orderId });
  }
}

/** The payment data with the service's figures for its order. */
export function dataWithOrder(data: PurchaseAuthData, order: Order): PurchaseAuthData {
  return {
    ...data,
    order_id: order.orderId,
    authorization_id: order.authorizationId,
    state: stateOfOrder(order.status),
    captured_amount: order.capturedAmount,
    refunded_amount: order.refundedAmount,
    cancelled_amount: order.cancelledAmount,
    service_status: order.status,
  };
}

export function requireOrder(data: PurchaseAuthData, operation: string): string {
  if (data.order_id) return data.order_id;
  throw new MedusaError(
    MedusaError.Types.NOT_ALLOWED,
    `${operation}: the authorization ${data.authorization_id ?? ""} has no order at the service yet (state ${data.state ?? "unknown"}).`,
  );
}

export function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
