import { describe, expect, it } from "vitest";
import type { ChargeRecord, ChargeStore, MemoryChargeStore } from "../src/index.js";
import {
  ANSWER_LOST,
  MINUTE,
  merchantWorld,
  ORDER_READ_FAILS,
  TIMEOUT,
  useMerchantWorlds,
  WINDOW,
} from "./support/merchant-world.js";
import { InstanceView } from "./support/shared-store.js";

// What a merchant write is answered once a send of it may have reached the service: never
// "nothing happened" (503 service-unavailable), which a back office acts on with a new sequence,
// moving the money twice. And what a send that did nothing is counted as: a write whose every send
// did nothing is not applied, without an alert.

const { shops, closers } = useMerchantWorlds();

/** Core's not_sent for the next write: its token is revoked and the token endpoint is down. */
function tokenEndpointDown(w: Awaited<ReturnType<typeof merchantWorld>>) {
  w.sandbox.injectFault({ kind: "revoke_access_token", count: 1 });
  w.sandbox.injectFault({ kind: "token_endpoint_down", count: 10 });
}

for (const kind of ["memory", "postgres"] as const) {
  describe(`a merchant write after a send that may have reached the service (${kind} store)`, () => {
    const world = () => merchantWorld(shops, kind, closers);

    it("a refund the service accepted whose order could not be re-read is answered done (order null), recorded done, and never sent again", async () => {
      const w = await world();
      expect((await w.press("capture", { amount: "20.00", sequence: "c1" })).status).toBe(200);
      w.sandbox.injectFault(ORDER_READ_FAILS);
      const pressed = await w.press("refund", { amount: "5.00", sequence: "r1" });
      w.sandbox.clearFaults();
      expect(pressed.status).toBe(200);
      expect(pressed.json).toMatchObject({ operation: { name: "refund", sequence: "r1", outcome: "done" } });
      expect(pressed.json.order).toBeNull();
      expect(w.moves("refund")).toEqual(["5.00"]);
      expect((await w.entry("refund:r1"))?.state).toBe("done");
      // Nothing left for the reconciler, and a re-press is answered from the log with the order.
      w.sandbox.advanceClock(2 * MINUTE);
      expect((await w.apps[0]!.router.reconcile()).writes).toMatchObject({ examined: 0, resent: 0 });
      const again = await w.press("refund", { amount: "5.00", sequence: "r1" });
      expect(again.json).toMatchObject({ operation: { outcome: "done" }, order: { refundedAmount: "5.00" } });
      expect(w.moves("refund")).toEqual(["5.00"]);
      expect(w.alerts).toEqual([]);
    });

    it("a cancel the service accepted whose order could not be re-read is payment-confirming, and the same sequence is told done", async () => {
      const w = await world();
      w.sandbox.injectFault(ORDER_READ_FAILS);
      const pressed = await w.press("cancel", { sequence: "k1" });
      w.sandbox.clearFaults();
      expect(pressed.status).toBe(503);
      expect(pressed.json).toMatchObject({
        type: "urn:purchase-auth:problem:payment-confirming",
        retryable: true,
      });
      expect(pressed.json.detail).toContain("same sequence");
      expect(w.order().status).toBe("Cancelled");
      const again = await w.press("cancel", { sequence: "k1" });
      expect(again.json).toMatchObject({ operation: { sequence: "k1", outcome: "done" } });
      expect((await w.entry("cancel:k1"))?.state).toBe("done");
    });

    it("a re-press that does nothing (429 on every try) after a send whose answer was lost is payment-confirming, not service-unavailable", async () => {
      const w = await world();
      expect((await w.press("capture", { amount: "20.00", sequence: "c1" })).status).toBe(200);
      w.sandbox.injectFault(ANSWER_LOST);
      expect((await w.press("refund", { amount: "5.00", sequence: "r1" })).status).toBe(503);
      w.sandbox.clearFaults();
      expect(w.moves("refund")).toEqual(["5.00"]);
      w.sandbox.advanceClock(MINUTE);
      // The service rate-limits every try of the re-press: this send did nothing (core: refused).
      w.sandbox.injectFault({
        kind: "rate_limited",
        retryAfterSeconds: 0,
        match: { method: "POST", path: "/manage/orders" },
        count: null,
      });
      const again = await w.press("refund", { amount: "5.00", sequence: "r1" });
      w.sandbox.clearFaults();
      expect(again.status).toBe(503);
      expect(again.json.type).toBe("urn:purchase-auth:problem:payment-confirming");
      expect(await w.entry("refund:r1")).toMatchObject({ state: "sent", sends: 2 });
      const settled = await w.press("refund", { amount: "5.00", sequence: "r1" });
      expect(settled.json).toMatchObject({ operation: { outcome: "done" } });
      expect(w.moves("refund")).toEqual(["5.00"]);
    });

    it("a refund every send of which did nothing, pressed twice, is not applied past the window without an alert", async () => {
      const w = await world();
      expect((await w.press("capture", { amount: "20.00", sequence: "c1" })).status).toBe(200);
      for (const _ of [1, 2]) {
        tokenEndpointDown(w);
        const pressed = await w.press("refund", { amount: "5.00", sequence: "r1" });
        w.sandbox.clearFaults();
        expect(pressed.json.type).toBe("urn:purchase-auth:problem:service-unavailable");
        w.sandbox.advanceClock(MINUTE);
      }
      expect(await w.entry("refund:r1")).toMatchObject({ state: "sent", sends: 2, undelivered: 2 });
      w.sandbox.advanceClock(WINDOW);
      const report = await w.apps[0]!.router.reconcile();
      expect(report.writes).toMatchObject({ examined: 1, resent: 0, resolved: 1, needsReview: 0 });
      expect((await w.entry("refund:r1"))?.state).toBe("refused");
      expect(w.moves("refund")).toEqual([]);
      expect(w.alerts).toEqual([]);
    });
  });
}

describe("a merchant write's send and the stored change that counts it (memory store)", () => {
  /** Instance 0 sees the store through hooks; `onChange` runs before each of its stored changes. */
  function hooked(onChange: (next: ChargeRecord) => Promise<void>) {
    return (store: ChargeStore, index: number) =>
      index === 0 ? new InstanceView(store as MemoryChargeStore, { beforeCompareAndSet: onChange }) : store;
  }

  it("a send whose stored change took the whole timeout is not made: nobody may still be waiting for it", async () => {
    let slow = false;
    const w = await merchantWorld(shops, "memory", closers, {
      wrapStore: hooked(async (next) => {
        if (!slow || next.operationLog?.["capture:p1"] === undefined) return;
        slow = false;
        w.sandbox.advanceClock(TIMEOUT);
      }),
    });
    slow = true;
    const pressed = await w.press("capture", { amount: "10.00", sequence: "p1" });
    expect(pressed.json.type).toBe("urn:purchase-auth:problem:service-unavailable");
    expect(w.moves("capture")).toEqual([]);
    expect(await w.entry("capture:p1")).toMatchObject({ state: "sent", sends: 1, undelivered: 1 });
  });

  it("a pass counts as resent only a write it did send: one settled meanwhile by another instance is not", async () => {
    let race = false;
    const w = await merchantWorld(shops, "memory", closers, {
      instances: 2,
      wrapStore: hooked(async (next) => {
        // The pass's stored change before its send: another instance's re-press settles it first.
        if (!race || next.operationLog?.["capture:p1"]?.sends !== 2) return;
        race = false;
        const other = await w.press("capture", { amount: "10.00", sequence: "p1" }, 1);
        expect(other.json).toMatchObject({ operation: { outcome: "done" } });
      }),
    });
    w.sandbox.injectFault(ANSWER_LOST);
    expect((await w.press("capture", { amount: "10.00", sequence: "p1" })).status).toBe(503);
    w.sandbox.clearFaults();
    w.sandbox.advanceClock(2 * MINUTE);
    race = true;
    const report = await w.apps[0]!.router.reconcile();
    expect(race).toBe(false);
    expect(report.writes).toMatchObject({ examined: 1, resent: 0, resolved: 1 });
    expect(w.recorders[0]!.writes.filter((write) => write.operation === "capture")).toHaveLength(1);
    expect(w.moves("capture")).toEqual(["10.00"]);
  });
});
