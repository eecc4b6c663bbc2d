import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { type ChargeRecord, MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import type { ChargeStore, StoredWebhookEvent } from "../src/stores/types.js";

// An authorization.succeeded the charge does not hold is alerted even when the charge learns its
// own authorization between the event's match and its change (decided on the record being
// changed). (Found by review.)

/** A webhook event as the router hands it over: signed, then verified. */
function event(type: string, data: object) {
  const signed = signWebhook({ type, data } as never, "secret");
  return verifyWebhook(signed.body, signed.headers, "secret");
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

interface Hooks {
  afterFindByAuthorizationId?: (id: string, found: ChargeRecord | undefined) => Promise<void>;
  beforeCompareAndSet?: (next: ChargeRecord) => Promise<void>;
  afterCompareAndSet?: (saved: ChargeRecord | undefined) => void;
  beforeUnappliedEvents?: (id: string) => Promise<void>;
  afterMarkEventApplied?: (id: string) => void;
}

/** One app instance's view of a store shared with another instance: the same data, its own latency. */
class InstanceView implements ChargeStore {
  constructor(
    readonly shared: MemoryChargeStore,
    readonly hooks: Hooks = {},
  ) {}
  create(charge: ChargeRecord) {
    return this.shared.create(charge);
  }
  findByReference(reference: string) {
    return this.shared.findByReference(reference);
  }
  async findByAuthorizationId(id: string) {
    const found = await this.shared.findByAuthorizationId(id);
    await this.hooks.afterFindByAuthorizationId?.(id, found);
    return found;
  }
  async compareAndSet(expectedVersion: number, next: ChargeRecord) {
    await this.hooks.beforeCompareAndSet?.(next);
    const saved = await this.shared.compareAndSet(expectedVersion, next);
    this.hooks.afterCompareAndSet?.(saved);
    return saved;
  }
  recordEvent(stored: StoredWebhookEvent) {
    return this.shared.recordEvent(stored);
  }
  async markEventApplied(id: string) {
    await this.shared.markEventApplied(id);
    this.hooks.afterMarkEventApplied?.(id);
  }
  async unappliedEvents(id: string) {
    await this.hooks.beforeUnappliedEvents?.(id);
    return this.shared.unappliedEvents(id);
  }
  listPending(limit: number) {
    return this.shared.listPending(limit);
  }
  listWithUnappliedEvents(limit: number, after?: string) {
    return this.shared.listWithUnappliedEvents(limit, after);
  }
}

function chargesOn(store: ChargeStore, alerts: PaymentAlert[]) {
  return new Charges({
    store,
    notifier: new ChargeNotifier(),
    logger: {},
    onEvent: undefined,
    alert: async (alert) => {
      alerts.push(alert);
    },
  });
}

function pendingCharge(): ChargeRecord {
  const now = new Date().toISOString();
  return {
    reference: `order-${randomUUID().slice(0, 8)}`,
    customerId: "customer-1",
    attempt: 1,
    status: "pending",
    amount: "49.80",
    currency: "EUR",
    // Manual capture: after authorization.succeeded no order event follows on its own.
    captureMode: "Manual",
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
}

describe("an authorization.succeeded the charge does not know is always alerted", () => {
  it("two instances: the charge learns its own 202 id between the webhook's match and its change", async () => {
    const shared = new MemoryChargeStore();
    const alerts: PaymentAlert[] = [];
    const { charge: stored } = await shared.create(pendingCharge());
    const ownId = randomUUID(); // Y: the 202 answer to the charge's create call
    const foreignId = randomUUID(); // X: another authorization for the same reference
    const foreign = event("authorization.succeeded", {
      authorizationId: foreignId,
      orderId: randomUUID(),
      customerToken: randomUUID(),
      reference: stored.reference,
      captureMode: "Manual",
      amount: "49.80",
      currency: "EUR",
    });

    const matchedByReference = gate(); // instance B: #chargeFor saw the charge without an id
    const answerStored = gate(); // instance A: Y is stored

    const instanceA = chargesOn(
      new InstanceView(shared, {
        beforeCompareAndSet: () => matchedByReference.opened,
        afterCompareAndSet: () => answerStored.open(),
      }),
      alerts,
    );
    const instanceB = chargesOn(
      new InstanceView(shared, {
        // B's first call after #chargeFor returned the charge (to fold X's parked events).
        beforeUnappliedEvents: async (id) => {
          if (id !== foreignId.toLowerCase()) return;
          matchedByReference.open();
          await answerStored.opened;
        },
      }),
      alerts,
    );

    const answer = instanceA.applyTo(stored, { kind: "accepted", authorizationId: ownId, attempt: 1 });
    const outcome = await instanceB.receiveWebhook(foreign);
    await answer;
    // The service redelivers X (say our 200 was lost): still nobody is told.
    const redelivered = await instanceB.receiveWebhook(foreign);

    const charge = await shared.findByReference(stored.reference);
    expect(charge?.authorizationId).toBe(ownId.toLowerCase());
    expect(alerts.map((alert) => [alert.kind, alert.authorizationId])).toEqual([
      ["unexpected_authorization", foreignId],
    ]);
    expect(redelivered).toBe("duplicate");
    expect(outcome).not.toBe("parked");
  });
});
