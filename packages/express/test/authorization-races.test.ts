import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import { authorizationSucceeded, chargesOn, pendingCharge } from "./support/charges-kit.js";
import { gate, InstanceView } from "./support/shared-store.js";

// Whether an authorization is the charge's own is decided on the record being changed, not on an
// earlier read. Two app instances share a store; one records the create call's 202 answer while the
// other matches a webhook. (Found by review.)
// - The charge's own authorization.succeeded, matched while the other instance records the same id
//   (or by a store whose id lookup lags its writes), is applied to the charge and raises no alert.
// - Another authorization's authorization.succeeded, matched while the charge had no id and changed
//   after the charge learnt its own, is still alerted.

describe("an authorization.succeeded for the id the charge just learnt is not foreign", () => {
  it("two instances: the 202 answer lands between the webhook's two reads; the charge must end authorized", async () => {
    const shared = new MemoryChargeStore();
    const alerts: PaymentAlert[] = [];
    const { charge: stored } = await shared.create(pendingCharge({ captureMode: "Manual" }));
    const authorizationId = randomUUID();
    const orderId = randomUUID();
    const succeeded = authorizationSucceeded(stored.reference, {
      authorizationId,
      orderId,
      captureMode: "Manual",
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
      { alerts },
    ).charges;
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
      { alerts },
    ).charges;

    const answer = instanceA.applyTo(stored, { kind: "accepted", authorizationId, attempt: 1 });
    // A has read the (empty) parked list and waits on its compare-and-set.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const outcome = await instanceB.receiveWebhook(succeeded);
    webhookDone.open();
    await answer;

    // What the service's records say: authorization X succeeded, order O exists (NotActivated).
    // Redelivery, the reconciler's retry and GET status get every chance to converge.
    await instanceB.receiveWebhook(succeeded);
    const { charge: afterAll } = await instanceA.retryWaitingEvents(
      (await shared.findByReference(stored.reference))!,
    );

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
    const { charges } = chargesOn(store, { alerts });
    const { charge: stored } = await store.create(pendingCharge({ captureMode: "Manual" }));
    const authorizationId = randomUUID();
    const orderId = randomUUID();

    // The 202 answer is stored; the index has not caught up when the webhook comes.
    store.lagging.add(authorizationId.toLowerCase());
    await charges.applyTo(stored, { kind: "accepted", authorizationId, attempt: 1 });
    const succeeded = authorizationSucceeded(stored.reference, {
      authorizationId,
      orderId,
      captureMode: "Manual",
    });
    await charges.receiveWebhook(succeeded);
    // The index catches up; the reconciler (pending with an id: retryWaitingEvents) runs.
    store.lagging.clear();
    const { charge: after } = await charges.retryWaitingEvents(
      (await store.findByReference(stored.reference))!,
    );

    expect(after).toMatchObject({ status: "authorized", authorizationId, orderId });
    expect(alerts).toEqual([]);
  });
});

describe("an authorization.succeeded the charge does not know is always alerted", () => {
  it("two instances: the charge learns its own 202 id between the webhook's match and its change", async () => {
    const shared = new MemoryChargeStore();
    const alerts: PaymentAlert[] = [];
    const { charge: stored } = await shared.create(pendingCharge({ captureMode: "Manual" }));
    const ownId = randomUUID(); // Y: the 202 answer to the charge's create call
    const foreignId = randomUUID(); // X: another authorization for the same reference
    const foreign = authorizationSucceeded(stored.reference, {
      authorizationId: foreignId,
      captureMode: "Manual",
    });

    const matchedByReference = gate(); // instance B: #chargeFor saw the charge without an id
    const answerStored = gate(); // instance A: Y is stored

    const instanceA = chargesOn(
      new InstanceView(shared, {
        beforeCompareAndSet: () => matchedByReference.opened,
        afterCompareAndSet: () => answerStored.open(),
      }),
      { alerts },
    ).charges;
    const instanceB = chargesOn(
      new InstanceView(shared, {
        // B's first call after #chargeFor returned the charge (to fold X's parked events).
        beforeUnappliedEvents: async (id) => {
          if (id !== foreignId.toLowerCase()) return;
          matchedByReference.open();
          await answerStored.opened;
        },
      }),
      { alerts },
    ).charges;

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
