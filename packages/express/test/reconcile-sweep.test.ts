import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import { chargeSentAt, nextWeek } from "./support/offline-router.js";
import { charge, useShops } from "./support/shop.js";

// The reconciler reaches every pending charge. A shop with many accepted charges waiting for their
// schedule (renewals a week ahead, say) keeps them pending for days; they are the least recently
// written, and a pass that looked only at the first page of them never reached a charge whose
// answer was lost a minute ago, whose key must be resent within the hour.

const shops = useShops();
const { shop, reconcilingShop } = shops;
afterEach(() => shops.sandbox().clearFaults());

/** Accepted charges whose outcomes are due next week: nothing to do for them yet. */
async function acceptedForNextWeek(store: MemoryChargeStore, count: number): Promise<void> {
  const schedule = nextWeek();
  for (let index = 0; index < count; index++) {
    await store.create(chargeSentAt(Date.now(), schedule, { authorizationId: randomUUID() }));
  }
}

describe("the reconciler's sweep of pending charges", () => {
  /** A shop whose newest charge's answer was lost behind `older` accepted charges; one pass, then its records. */
  async function lostAnswerBehind(older: number) {
    const store = new MemoryChargeStore();
    const { data, app } = await reconcilingShop(store);
    await acceptedForNextWeek(store, older);
    const customer = data.customer();
    const cartId = data.cart(customer);
    const sandbox = shops.sandbox();
    sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    expect((await charge(app, customer, { cartId })).status).toBe(503);
    sandbox.clearFaults();
    const report = await app.router.reconcile();
    return {
      report,
      charge: await store.findByReference(data.referenceOf(cartId)),
      authorizations: sandbox.authorizations({ merchantId: data.merchant.merchantId }),
    };
  }

  it("resends a lost answer's key even behind more than a page of older accepted charges", async () => {
    const { report, charge, authorizations } = await lostAnswerBehind(450);
    expect(report).toMatchObject({ examined: 451, resolved: 1, needsReview: 0 });
    expect(charge).toMatchObject({ status: "captured" });
    expect(authorizations).toHaveLength(1);
  });

  it("resends a lost answer's key in the next pass even behind more accepted charges than a pass sweeps", async () => {
    // A pass sweeps 2,000 pending charges: with more, the sweep reached the newest (the lost answer)
    // only a pass later per 2,000, and beyond ~100,000 after the service forgot its key.
    const { report, charge, authorizations } = await lostAnswerBehind(2_100);
    expect(report).toMatchObject({ resolved: 1, needsReview: 0 });
    expect(charge).toMatchObject({ status: "captured" });
    expect(authorizations).toHaveLength(1);
  });

  it("after an outage spreads the lost answers over passes, 1,000 sends a pass, and charges each order once", async () => {
    const store = new MemoryChargeStore();
    const { data, app } = await reconcilingShop(store);
    const sandbox = shops.sandbox();
    // The service commits every create and every answer is lost, until the outage ends.
    const faultId = sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    const customer = data.customer();
    const carts = Array.from({ length: 1_200 }, () => data.cart(customer));
    for (const cartId of carts) expect((await charge(app, customer, { cartId })).status).toBe(503);
    const fired = () => sandbox.faults().find((fault) => fault.faultId === faultId)!.fired;
    // The client's own retries of a dropped answer: the same number for every send of a key.
    const attemptsPerSend = fired() / carts.length;
    expect(Number.isInteger(attemptsPerSend)).toBe(true);

    // Still down: each pass resends five pages of the unanswered charges, not also the sweep's.
    // Each resend is counted on its charge before it goes out (a change, so the charge moves to the
    // end of the order the passes go through): the second pass sends the 200 not sent yet, then
    // goes on with the oldest sent in the first.
    const sendsPerPass: number[] = [];
    for (let pass = 0; pass < 2; pass++) {
      const before = fired();
      await app.router.reconcile();
      sendsPerPass.push((fired() - before) / attemptsPerSend);
    }
    expect(sendsPerPass).toEqual([1_000, 1_000]);
    for (const cartId of carts) {
      const stored = await store.findByReference(data.referenceOf(cartId));
      expect(stored?.pendingAuthorization?.sends).toBeGreaterThanOrEqual(2);
    }

    sandbox.clearFaults();
    let resolved = 0;
    for (let pass = 0; pass < 2; pass++) resolved += (await app.router.reconcile()).resolved;
    expect(resolved).toBe(1_200);
    for (const cartId of carts) {
      expect(await store.findByReference(data.referenceOf(cartId))).toMatchObject({ status: "captured" });
    }
    // One authorization per order at the service: every resend met its key.
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1_200);
    // 3,600 calls one after another: a minute alone on these machines, more beside the rest of CI.
  }, 180_000);

  it("goes on where the last pass stopped: a pass is bounded, the sweep reaches every charge", async () => {
    const store = new MemoryChargeStore();
    const { app } = await shop({ store, receiveWebhooks: false, reconcileIntervalMs: 0 });
    await acceptedForNextWeek(store, 2_100);
    expect((await app.router.reconcile()).examined).toBe(2_000);
    expect((await app.router.reconcile()).examined).toBe(100);
    expect((await app.router.reconcile()).examined).toBe(2_000);
  });

  it("with a store that ignores the cursor (written before it existed), looks at its first page once per pass", async () => {
    class StoreWithoutCursor extends MemoryChargeStore {
      override listPending(limit: number) {
        return super.listPending(limit);
      }
    }
    const store = new StoreWithoutCursor();
    const { app } = await shop({ store, receiveWebhooks: false, reconcileIntervalMs: 0 });
    await acceptedForNextWeek(store, 450);
    expect((await app.router.reconcile()).examined).toBe(200);
    expect((await app.router.reconcile()).examined).toBe(200);
  });
});
