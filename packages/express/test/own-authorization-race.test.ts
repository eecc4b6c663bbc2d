import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { type ChargeRecord, MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import type { ChargeStore, StoredWebhookEvent } from "../src/stores/types.js";

// The charge's own authorization.succeeded, matched while another instance records the same id
// from the create call's 202 answer (or by a store whose id lookup lags its writes), is applied to
// the charge and raises no alert: whether an authorization is the charge's is decided on the
// record being changed, not on an earlier read. (Found by review.)

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

describe("an authorization.succeeded for the id the charge just learnt is not foreign", () => {
  it("two instances: the 202 answer lands between the webhook's two reads; the charge must end authorized", async () => {
    const shared = new MemoryChargeStore();
    const alerts: PaymentAlert[] = [];
    const { charge: stored } = await shared.create(pendingCharge());
    const authorizationId = randomUUID();
    const orderId = randomUUID();
    const succeeded = event("authorization.succeeded", {
      authorizationId,
      orderId,
      customerToken: randomUUID(),
      reference: stored.reference,
      captureMode: "Manual",
      amount: "49.80",
      currency: "EUR",
    });

    const webhookMissed = gate(); // instance B: findByAuthorizationId(X) found nothing
    const answerStored = gate(); // instance A: the 202 answer (X) is stored
    const webhookDone = gate(); // instance B answered the delivery (and, now, marked the event)

    // Instance A applies the create call's 202 answer; its store round trips are slow.
    let unappliedReads = 0;
    const instanceA = chargesOn(
      new InstanceView(shared, {
        beforeCompareAndSet: () => webhookMissed.opened,
        afterCompareAndSet: () => answerStored.open(),
        beforeUnappliedEvents: async () => {
          unappliedReads++;
          // The read after the change (events that arrived meanwhile) comes after B answered.
          if (unappliedReads === 2) await webhookDone.opened;
        },
      }),
      alerts,
    );
    // Instance B receives the service's authorization.succeeded for X.
    const instanceB = chargesOn(
      new InstanceView(shared, {
        afterFindByAuthorizationId: async (_id, found) => {
          if (found === undefined) {
            webhookMissed.open();
            await answerStored.opened;
          }
        },
      }),
      alerts,
    );

    const answer = instanceA.applyTo(stored, { kind: "accepted", authorizationId, attempt: 1 });
    // A has read the (empty) parked list and waits on its compare-and-set.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const outcome = await instanceB.receiveWebhook(succeeded);
    webhookDone.open();
    await answer;

    // What the service's records say: authorization X succeeded, order O exists (NotActivated).
    // Redelivery, the reconciler's retry and GET status get every chance to converge.
    await instanceB.receiveWebhook(succeeded);
    const afterAll = await instanceA.retryWaitingEvents((await shared.findByReference(stored.reference))!);

    expect(afterAll).toMatchObject({ status: "authorized", authorizationId, orderId });
    expect(outcome).not.toBe("ignored");
    expect(alerts).toEqual([]);
  });

  it("a store whose authorization-id lookup lags its writes (a secondary index): the charge must end authorized", async () => {
    // A user store per the ChargeStore contract, which asks nothing of findByAuthorizationId's
    // freshness: a miss was harmless before 376b8d7 (the event is parked, then applied).
    class LaggingIndexStore extends MemoryChargeStore {
      lagging = new Set<string>();
      override async findByAuthorizationId(id: string) {
        if (this.lagging.has(id.toLowerCase())) return undefined;
        return super.findByAuthorizationId(id);
      }
    }
    const store = new LaggingIndexStore();
    const alerts: PaymentAlert[] = [];
    const charges = chargesOn(store, alerts);
    const { charge: stored } = await store.create(pendingCharge());
    const authorizationId = randomUUID();
    const orderId = randomUUID();

    // The 202 answer is stored; the index has not caught up when the webhook comes.
    store.lagging.add(authorizationId.toLowerCase());
    await charges.applyTo(stored, { kind: "accepted", authorizationId, attempt: 1 });
    const succeeded = event("authorization.succeeded", {
      authorizationId,
      orderId,
      customerToken: randomUUID(),
      reference: stored.reference,
      captureMode: "Manual",
      amount: "49.80",
      currency: "EUR",
    });
    await charges.receiveWebhook(succeeded);
    // The index catches up; the reconciler (pending with an id: retryWaitingEvents) runs.
    store.lagging.clear();
    const after = await charges.retryWaitingEvents((await store.findByReference(stored.reference))!);

    expect(after).toMatchObject({ status: "authorized", authorizationId, orderId });
    expect(alerts).toEqual([]);
  });
});
