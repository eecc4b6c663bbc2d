import { randomUUID } from "node:crypto";
import type { AttemptSchedule } from "@purchase-auth/core";
import { type ChargeRecord, type PurchaseAuthOptions, purchaseAuth } from "../../src/index.js";
import { pendingCharge } from "./charges-kit.js";

// The reconciler over a store a test fills itself: a router whose client points nowhere unless the
// test gives its own (nothing here is sent), and the charges a store holds once their create call
// was recorded.

/** A router on `store` for `router.reconcile()`: no shop, no background passes, quiet. */
export function offlineRouter(options: Pick<PurchaseAuthOptions, "store"> & Partial<PurchaseAuthOptions>) {
  return purchaseAuth({
    clientOptions: {
      baseUrl: "http://127.0.0.1:9",
      clientId: "client",
      clientSecret: "secret",
      scope: "api://purchase-auth/.default",
    },
    resolveCustomer: () => null,
    buildOrder: () => {
      throw new Error("no charge expected");
    },
    webhookSecret: "whsec_offline",
    reconcileIntervalMs: 0,
    logger: {},
    ...options,
  });
}

/** A pending charge whose create call (with `schedule`) was recorded and first sent at `sentAt`. */
export function chargeSentAt(
  sentAt: number,
  schedule: AttemptSchedule,
  overrides: Partial<ChargeRecord> = {},
): ChargeRecord {
  const iso = new Date(sentAt).toISOString();
  const reference = overrides.reference ?? `order-${randomUUID().slice(0, 8)}`;
  return pendingCharge({
    reference,
    createdAt: iso,
    updatedAt: iso,
    pendingAuthorization: {
      idempotencyKey: randomUUID(),
      firstSentAt: iso,
      request: {
        customerToken: randomUUID(),
        order: { items: [], currency: "EUR", reference },
        attemptSchedule: schedule,
      },
    },
    ...overrides,
  });
}

/**
 * `chargeSentAt`'s charge with a create call the sandbox accepts, for a test that resends it there:
 * two kilos of beans (the charge's 49.80 EUR) for `customerToken`, a token of the sandbox's.
 */
export function sandboxChargeSentAt(
  customerToken: string,
  sentAt: number,
  schedule: AttemptSchedule,
  overrides: Partial<ChargeRecord> = {},
): ChargeRecord {
  const charge = chargeSentAt(sentAt, schedule, overrides);
  const { request } = charge.pendingAuthorization!;
  request.customerToken = customerToken;
  request.order.items = [
    { id: "beans-1kg", description: "Coffee beans 1 kg", unitPrice: "24.90", quantity: "2", vat: "14" },
  ];
  return charge;
}

/** An absolute schedule of one attempt a week from now. */
export function nextWeek(): AttemptSchedule {
  const at = new Date(Date.now() + 7 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, "+00:00");
  return { absolute: [at] };
}
