import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook, type WebhookEvent } from "@purchase-auth/core";
import { Charges, type WebhookEventListener } from "../../src/charges/charges.js";
import { ChargeNotifier } from "../../src/charges/notifier.js";
import type { ChargeRecord, ChargeStore } from "../../src/index.js";
import type { PaymentAlert } from "../../src/reconcile/alerts.js";

// The charges' bookkeeping without HTTP: the pieces the tests of `Charges` share.

/** A webhook event as the router hands it over: signed, then verified. */
export function signedEvent(type: string, data: object): WebhookEvent {
  const signed = signWebhook({ type, data } as never, "secret");
  return verifyWebhook(signed.body, signed.headers, "secret");
}

/** A pending charge of a new reference (attempt 1, no authorization yet, 49.80 EUR, Auto), with `overrides`. */
export function pendingCharge(overrides: Partial<ChargeRecord> = {}): ChargeRecord {
  const now = new Date().toISOString();
  return {
    reference: `order-${randomUUID().slice(0, 8)}`,
    customerId: "customer-1",
    attempt: 1,
    status: "pending",
    amount: "49.80",
    currency: "EUR",
    captureMode: "Auto",
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: 1,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

/** An authorized manual-capture charge (its authorization and order ids known), with `overrides`. */
export function authorizedCharge(overrides: Partial<ChargeRecord> = {}): ChargeRecord {
  return pendingCharge({
    authorizationId: "0b7a4e0c-1111-4a4a-8a8a-000000000001",
    orderId: "0b7a4e0c-2222-4a4a-8a8a-000000000002",
    status: "authorized",
    captureMode: "Manual",
    version: 3,
    ...overrides,
  });
}

/**
 * `Charges` over `store`; the alerts it raises are pushed to `alerts` (one list can serve several
 * instances sharing a store).
 */
export function chargesOn<Store extends ChargeStore>(
  store: Store,
  options: { alerts?: PaymentAlert[]; onEvent?: WebhookEventListener } = {},
): { store: Store; charges: Charges; alerts: PaymentAlert[] } {
  const alerts = options.alerts ?? [];
  const charges = new Charges({
    store,
    notifier: new ChargeNotifier(),
    logger: {},
    onEvent: options.onEvent,
    alert: async (alert) => {
      alerts.push(alert);
    },
  });
  return { store, charges, alerts };
}

/** Attempt 1 of the charge accepted (202) as a new authorization, then failed; that id. */
export async function acceptedThenFailed(charges: Charges, reference: string): Promise<string> {
  const authorizationId = randomUUID();
  await charges.apply(reference, { kind: "accepted", authorizationId, attempt: 1 });
  await charges.apply(reference, { kind: "failed", authorizationId, reason: "PAYMENT_FAILED", attempt: 1 });
  return authorizationId;
}

/**
 * An `authorization.succeeded` for `reference` (49.80 EUR; a new authorization, order and customer
 * token unless `data` names them).
 */
export function authorizationSucceeded(reference: string, data: Record<string, string> = {}): WebhookEvent {
  return signedEvent("authorization.succeeded", {
    authorizationId: randomUUID(),
    orderId: randomUUID(),
    customerToken: randomUUID(),
    reference,
    captureMode: "Auto",
    amount: "49.80",
    currency: "EUR",
    ...data,
  });
}
