import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { advance, type ChargeNews } from "../src/charges/state-machine.js";
import { type ChargeRecord, MemoryChargeStore, type PendingCursor } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import { chargeSentAt, offlineRouter } from "./support/offline-router.js";

// A reconcile pass lists its pending charges first (thousands of them) and then handles them one by one,
// each resend taking up to the router's timeout: what it decides on is a copy that may be minutes
// old. Giving a charge up to review is decided again on the charge as stored, so a resend or a
// webhook that moved it on meanwhile is never overruled.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A memory store that runs `afterList` once, right after the reconciler listed a page. */
class StoreChangedAfterListing extends MemoryChargeStore {
  afterList: (() => Promise<void>) | undefined;
  override async listPending(limit: number, after?: PendingCursor): Promise<ChargeRecord[]> {
    const found = await super.listPending(limit, after);
    const change = this.afterList;
    this.afterList = undefined;
    await change?.();
    return found;
  }

  /** What a request or a webhook of another instance stores meanwhile. */
  async learn(reference: string, news: ChargeNews, at: number): Promise<void> {
    const current = (await this.findByReference(reference))!;
    const next = advance(current, news, new Date(at))!;
    expect(await this.compareAndSet(current.version, next)).toBeDefined();
  }
}

function routerOn(store: MemoryChargeStore, clock: { now: number }, alerts: PaymentAlert[]) {
  return offlineRouter({
    store,
    outcomeGraceMs: HOUR,
    now: () => clock.now,
    onAlert: (alert) => {
      alerts.push(alert);
    },
  });
}

const IN_THREE_DAYS = { relative: ["3.00:00:00"] };

describe("a reconcile pass decides on the charge as stored, not on the copy it listed", () => {
  it("a lost answer that a shopper's resend answered (202) after the listing is not given up to review", async () => {
    const clock = { now: Date.now() };
    const store = new StoreChangedAfterListing();
    const alerts: PaymentAlert[] = [];
    const router = routerOn(store, clock, alerts);
    // Sent 54 minutes ago, answer lost: still inside the 55-minute resend window when listed.
    const charge = chargeSentAt(clock.now - 54 * MINUTE, IN_THREE_DAYS);
    await store.create(charge);
    store.afterList = async () => {
      // The shopper's repeated POST resent the key and got 202; then the pass reaches the charge,
      // its window passed by then.
      await store.learn(
        charge.reference,
        { kind: "accepted", authorizationId: randomUUID(), attempt: 1 },
        clock.now,
      );
      clock.now += 2 * MINUTE;
    };
    const report = await router.reconcile();
    await router.close();
    expect(report.needsReview).toBe(0);
    expect(await store.findByReference(charge.reference)).toMatchObject({ status: "pending" });
    expect(alerts).toEqual([]);
  });

  it("an overdue accepted charge that got news after the listing is not given up to review", async () => {
    const clock = { now: Date.now() };
    const store = new StoreChangedAfterListing();
    const alerts: PaymentAlert[] = [];
    const router = routerOn(store, clock, alerts);
    const authorizationId = randomUUID();
    // Accepted long ago, its one attempt (3 days later) and the grace past.
    const charge = chargeSentAt(clock.now - 4 * 24 * HOUR, IN_THREE_DAYS, { authorizationId });
    await store.create(charge);
    store.afterList = () =>
      store.learn(
        charge.reference,
        { kind: "retrying", authorizationId, reason: "INSUFFICIENT_FUNDS" },
        clock.now,
      );
    const report = await router.reconcile();
    await router.close();
    expect(report.needsReview).toBe(0);
    expect(await store.findByReference(charge.reference)).toMatchObject({
      status: "pending",
      reason: "INSUFFICIENT_FUNDS",
    });
    expect(alerts).toEqual([]);
  });

  it("a lost answer another instance gave up to review after the listing is never sent again", async () => {
    const clock = { now: Date.now() };
    const store = new StoreChangedAfterListing();
    const alerts: PaymentAlert[] = [];
    const router = routerOn(store, clock, alerts);
    const charge = chargeSentAt(clock.now - 10 * MINUTE, IN_THREE_DAYS);
    await store.create(charge);
    store.afterList = () =>
      store.learn(
        charge.reference,
        { kind: "needs_review", reason: "OUTCOME_UNKNOWN_PAST_IDEMPOTENCY_WINDOW" },
        clock.now,
      );
    // The client would fail loudly (nothing listens on port 9) and the report would say so.
    const report = await router.reconcile();
    await router.close();
    expect(report).toMatchObject({ resolved: 0, stillUnknown: 0, needsReview: 0 });
    expect(await store.findByReference(charge.reference)).toMatchObject({ status: "needs_review" });
  });
});
