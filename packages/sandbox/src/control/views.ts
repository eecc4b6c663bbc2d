import { formatCents } from "@purchase-auth/core";
import { toEpochMs } from "../core/stored-time.js";
import type { AuthorizationRecord } from "../state/authorizations.js";
import { entriesOf } from "../state/compact-list.js";
import type { CustomerTokenRecord } from "../state/customer-tokens.js";
import { type OrderRecord, toOrderResource } from "../state/orders.js";
import type { BehaviourChange } from "./input.js";
import type { AuthorizationView, CustomerTokenView, OrderView } from "./types.js";

// What the control surface shows of the internal records: plain JSON-safe copies (amounts as
// decimal strings, times as ISO 8601), so a test can neither see bigints nor change state by accident.

/** Applies the behaviour fields that were given; null clears funds (unlimited) and failureReason. */
export function applyBehaviour(token: CustomerTokenRecord, change: BehaviourChange): void {
  if (change.fundsCents !== undefined) token.fundsCents = change.fundsCents ?? undefined;
  if (change.needsChallenge !== undefined) token.needsChallenge = change.needsChallenge;
  if (change.failureReason !== undefined) token.failureReason = change.failureReason ?? undefined;
  if (change.failNextAttempts !== undefined) token.failNextAttempts = change.failNextAttempts;
  if (change.paymentMethodExpired !== undefined) token.paymentMethodExpired = change.paymentMethodExpired;
}

export function tokenView(token: CustomerTokenRecord): CustomerTokenView {
  return {
    customerToken: token.customerToken,
    merchantId: token.merchantId,
    status: token.status,
    currency: token.currency,
    storeId: token.storeId,
    captureMode: token.captureMode,
    funds: token.fundsCents === undefined ? null : formatCents(token.fundsCents),
    needsChallenge: token.needsChallenge,
    failureReason: token.failureReason ?? null,
    failNextAttempts: [...token.failNextAttempts],
    paymentMethodExpired: token.paymentMethodExpired,
  };
}

export function authorizationView(auth: AuthorizationRecord): AuthorizationView {
  const optional = <K extends string>(key: K, value: string | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;
  return {
    authorizationId: auth.authorizationId,
    merchantId: auth.merchantId,
    clientId: auth.clientId,
    customerToken: auth.customerToken,
    storeId: auth.storeId,
    status: auth.status,
    amount: formatCents(auth.totalCents),
    currency: auth.currency,
    captureMode: auth.captureMode,
    ...optional("reference", auth.reference),
    ...optional("actionReference", auth.actionReference),
    ...optional("settlementReference", auth.settlementReference),
    ...optional("idempotencyKey", auth.idempotencyKey),
    schedule: auth.plan.kind,
    maxAttempts: auth.maxAttempts,
    attempts: entriesOf(auth.attempts),
    ...optional(
      "nextAttemptAt",
      auth.nextAttemptAt === undefined ? undefined : new Date(auth.nextAttemptAt).toISOString(),
    ),
    ...optional("orderId", auth.orderId),
    ...optional("failureReason", auth.failureReason),
    createdAt: new Date(toEpochMs(auth.createdAt)).toISOString(),
  };
}

export function orderView(order: OrderRecord): OrderView {
  return { ...toOrderResource(order), merchantId: order.merchantId, operations: entriesOf(order.operations) };
}
