import { describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import {
  holder,
  type MerchantWorld,
  MINUTE,
  merchantWorld,
  NEVER_ARRIVED,
  useMerchantWorlds,
  WINDOW,
} from "./support/merchant-world.js";
import type { RecordedWrite } from "./support/recording-client.js";
import { call, charge, createShopData, staffOnly, startShopApp } from "./support/shop.js";

// What a merchant write's log entry says about its sends, and what may be decided from it: a write
// none of whose sends can have reached the service (core: `not_sent`) is never sent by the
// reconciler (the merchant was told nothing happened), and nothing is decided "not applied" while
// a send of it may still be on its way (joined in one process; `timeoutMs` after its last send
// across instances, or after the charge's last change for an entry stored before sends were timed).

const { shops, closers } = useMerchantWorlds();

for (const kind of ["memory", "postgres"] as const) {
  describe(`a merchant write's sends decide what may be done with it (${kind} store)`, () => {
    const world = (instances = 1, holdWrite?: (write: RecordedWrite) => Promise<void> | void) =>
      merchantWorld(shops, kind, closers, { instances, holdWrite });

    /** A refund of 5.00 (sequence r1) answered 503 "nothing happened": the token endpoint was down. */
    async function refundNotSent(w: MerchantWorld) {
      expect((await w.press("capture", { amount: "20.00", sequence: "c1" })).status).toBe(200);
      w.sandbox.injectFault({ kind: "revoke_access_token", count: 1 });
      w.sandbox.injectFault({ kind: "token_endpoint_down", count: 10 });
      const first = await w.press("refund", { amount: "5.00", sequence: "r1" });
      w.sandbox.clearFaults();
      expect(first.status).toBe(503);
      expect(first.json).toMatchObject({
        type: "urn:purchase-auth:problem:service-unavailable",
        retryable: true,
      });
      expect(w.moves("refund")).toEqual([]);
      expect(await w.entry("refund:r1")).toMatchObject({ state: "sent", sends: 1, undelivered: 1 });
    }

    it("a refund the merchant was told never happened (not_sent) is never sent by the reconciler, and past the window is not applied without an alert", async () => {
      const w = await world();
      await refundNotSent(w);
      // Told nothing happened, the back office refunds by a new press.
      w.sandbox.advanceClock(MINUTE);
      expect((await w.press("refund", { amount: "5.00", sequence: "r2" })).status).toBe(200);
      w.sandbox.advanceClock(2 * MINUTE);
      const inside = await w.apps[0]!.router.reconcile();
      expect(inside.writes).toMatchObject({ examined: 0, resent: 0 });
      expect(w.moves("refund")).toEqual(["5.00"]);
      expect((await w.entry("refund:r1"))?.state).toBe("sent");
      w.sandbox.advanceClock(WINDOW);
      const past = await w.apps[0]!.router.reconcile();
      expect(past.writes).toMatchObject({ examined: 1, resent: 0, resolved: 1, needsReview: 0 });
      expect((await w.entry("refund:r1"))?.state).toBe("refused");
      expect(w.moves("refund")).toEqual(["5.00"]);
      expect(w.alerts).toEqual([]);
      const again = await w.press("refund", { amount: "5.00", sequence: "r1" });
      expect(again.json.type).toBe("urn:purchase-auth:problem:operation-refused");
      expect(w.moves("refund")).toEqual(["5.00"]);
    });

    it("a re-press of a not_sent refund inside the window sends it: refunded once", async () => {
      const w = await world();
      await refundNotSent(w);
      w.sandbox.advanceClock(10 * MINUTE);
      const again = await w.press("refund", { amount: "5.00", sequence: "r1" });
      expect(again.json).toMatchObject({ operation: { sequence: "r1", outcome: "done" } });
      expect(w.moves("refund")).toEqual(["5.00"]);
      expect(await w.entry("refund:r1")).toMatchObject({ state: "done", sends: 2, undelivered: 1 });
    });

    for (const op of [
      { operation: "cancel", sequence: "c1", applied: "Cancelled" },
      { operation: "capture", sequence: "rest1", applied: "Activated" },
    ] as const) {
      it(`${op.operation}: a re-press just past the window joins the reconciler's resend begun just inside it, and is told what it did`, async () => {
        const h = holder();
        const w = await world(1, h.hold);
        w.sandbox.injectFault(NEVER_ARRIVED);
        expect((await w.press(op.operation, { sequence: op.sequence })).status).toBe(503);
        w.sandbox.clearFaults();
        w.sandbox.advanceClock(WINDOW - 1000);
        h.arm();
        const pass = w.apps[0]!.router.reconcile();
        await h.sending;
        w.sandbox.advanceClock(2000);
        const pressed = w.press(op.operation, { sequence: op.sequence });
        h.release();
        const report = await pass;
        const again = await pressed;
        expect(report.writes).toMatchObject({ examined: 1, resent: 1, resolved: 1 });
        expect(again.status).toBe(200);
        expect(again.json).toMatchObject({ operation: { sequence: op.sequence, outcome: "done" } });
        expect(w.order().status).toBe(op.applied);
        expect((await w.entry(`${op.operation}:${op.sequence}`))?.state).toBe("done");
      });
    }

    it("cancel on two instances: past the window, nothing is decided while the other instance's resend may be on its way", async () => {
      const h = holder();
      const w = await world(2, h.hold);
      w.sandbox.injectFault(NEVER_ARRIVED);
      expect((await w.press("cancel", { sequence: "c1" })).status).toBe(503);
      w.sandbox.clearFaults();
      w.sandbox.advanceClock(WINDOW - 1000);
      h.arm();
      const pass0 = w.apps[0]!.router.reconcile();
      await h.sending;
      w.sandbox.advanceClock(2000);
      // Instance 1's pass leaves it for a later one: its last send began less than timeoutMs ago.
      const pass1 = await w.apps[1]!.router.reconcile();
      expect(pass1.writes).toMatchObject({ examined: 0, resolved: 0 });
      expect((await w.entry("cancel:c1"))?.state).toBe("sent");
      const pressed = await w.press("cancel", { sequence: "c1" }, 1);
      expect(pressed.status).toBe(503);
      expect(pressed.json).toMatchObject({
        type: "urn:purchase-auth:problem:payment-confirming",
        retryable: true,
      });
      h.release();
      expect((await pass0).writes).toMatchObject({ resent: 1, resolved: 1 });
      expect(w.order().status).toBe("Cancelled");
      expect((await w.entry("cancel:c1"))?.state).toBe("done");
      const later = await w.press("cancel", { sequence: "c1" }, 1);
      expect(later.json).toMatchObject({ operation: { outcome: "done" } });
    });

    it("an entry stored before sends were timed, being sent by an older instance: a pass waits timeoutMs after the charge's last change", async () => {
      const h = holder();
      const w = await world(2, h.hold);
      h.arm();
      const pressed = w.press("cancel", { sequence: "c1" });
      await h.sending;
      // What an earlier release stored: no firstSentAt, lastSentAt nor counts.
      const store = w.stores[0]!;
      const current = (await store.findByReference(w.reference))!;
      const { operation, sequence, fingerprint, state } = current.operationLog!["cancel:c1"]!;
      const legacy = { ...current.operationLog, "cancel:c1": { operation, sequence, fingerprint, state } };
      expect(
        await store.compareAndSet(current.version, {
          ...current,
          operationLog: legacy,
          version: current.version + 1,
        }),
      ).toBeDefined();
      const pass = await w.apps[1]!.router.reconcile();
      expect(pass.writes).toMatchObject({ examined: 0 });
      expect((await w.entry("cancel:c1"))?.state).toBe("sent");
      h.release();
      expect((await pressed).json).toMatchObject({ operation: { outcome: "done" } });
      expect(w.order().status).toBe("Cancelled");
      expect((await w.entry("cancel:c1"))?.state).toBe("done");
    });
  });
}

describe("a reconcile pass and a charge it cannot read", () => {
  it("settles the other charges' writes, counts the one that failed, and warns without secrets", async () => {
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    let failing: string | undefined;
    class FlakyStore extends MemoryChargeStore {
      override async findByReference(reference: string) {
        if (reference === failing)
          throw new Error(`connection to postgres://user:${data.merchant.clientSecret}@db lost`);
        return super.findByReference(reference);
      }
    }
    const warnings: unknown[][] = [];
    const app = await startShopApp(data, {
      store: new FlakyStore(),
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      authorizeMerchant: staffOnly,
      captureMode: "Manual",
      now: () => sandbox.now(),
      logger: { warn: (...args: unknown[]) => warnings.push(args) },
    });
    closers.push(() => app.close());
    const charges = [];
    for (let index = 0; index < 2; index++) {
      const customer = data.customer();
      const cartId = data.cart(customer);
      const paid = await charge(app, customer, { cartId });
      const id: string = paid.json.authorizationId;
      sandbox.injectFault({
        kind: "drop_after_commit",
        match: { method: "POST", path: "/manage/orders" },
        count: null,
      });
      const lost = await call(app, "POST", `/charges/${id}/capture`, {
        merchant: true,
        body: { amount: "10.00", sequence: "p1" },
      });
      sandbox.clearFaults();
      expect(lost.status).toBe(503);
      charges.push(data.referenceOf(cartId));
    }
    failing = charges[0];
    sandbox.advanceClock(2 * MINUTE);
    const report = await app.router.reconcile();
    expect(report.writes).toMatchObject({ examined: 1, resent: 1, resolved: 1, failed: 1 });
    failing = undefined;
    const store = app.router.store;
    expect((await store.findByReference(charges[1]!))?.operationLog?.["capture:p1"]?.state).toBe("done");
    expect((await store.findByReference(charges[0]!))?.operationLog?.["capture:p1"]?.state).toBe("sent");
    expect(warnings.some((line) => String(line[0]).includes("could not be settled"))).toBe(true);
    expect(JSON.stringify(warnings)).not.toContain(data.merchant.clientSecret);
    // The next pass settles it.
    expect((await app.router.reconcile()).writes).toMatchObject({ resolved: 1, failed: 0 });
  });
});
