import type { FaultSpec } from "@purchase-auth/sandbox";
import { describe, expect, it } from "vitest";
import {
  ANSWER_LOST,
  HOUR,
  holder,
  MINUTE,
  merchantWorld,
  NEVER_ARRIVED,
  useMerchantWorlds,
} from "./support/merchant-world.js";
import type { RecordedWrite } from "./support/recording-client.js";

// Issue 12: a merchant write (capture, cancel, refund) whose answer was lost and that nobody sends
// again must not stay `sent` for ever. The reconciler sends it again with its key and body while the
// service remembers the key, as a re-press would; past the window it never sends the key again: a
// capture of the rest or a cancel is told by the order, a capture or refund of an amount is given up
// to review (one alert, an ERROR line, `unconfirmed`). Counted where the router calls its client: a
// key sent again is answered from the service's store and would not show there.

const { shops, closers } = useMerchantWorlds();

for (const kind of ["memory", "postgres"] as const) {
  describe(`the reconciler settles merchant writes nobody sent again (${kind} store)`, () => {
    /** The shared world, plus what these tests ask of it. */
    async function world(instances = 1, holdWrite?: (write: RecordedWrite) => Promise<void> | void) {
      const w = await merchantWorld(shops, kind, closers, { instances, holdWrite });
      /** The order writes instance `instance` sent with the key of the write first sent with `operation`. */
      const sendsOfFirst = (operation: string, instance = 0) => {
        const writes = w.recorders[instance]!.writes;
        const key = writes.find((write) => write.operation === operation)?.idempotencyKey;
        return writes.filter((write) => write.idempotencyKey === key);
      };
      /** Presses `operation` with `body` while `fault` hits every order write: 503, answer unknown. */
      const lost = async (fault: FaultSpec, operation: string, body: unknown) => {
        w.sandbox.injectFault(fault);
        expect((await w.press(operation, body)).status).toBe(503);
        w.sandbox.clearFaults();
      };
      return { ...w, sendsOfFirst, lost };
    }

    it("a partial capture whose answer was lost, never pressed again, is sent again with its key and body: done, captured once", async () => {
      const w = await world();
      await w.lost(ANSWER_LOST, "capture", { amount: "10.00", sequence: "p1" });
      expect(w.moves("capture")).toEqual(["10.00"]);
      expect((await w.entry("capture:p1"))?.state).toBe("sent");
      // Past the router's timeout (its request cannot still be sending it), inside the window.
      w.sandbox.advanceClock(2 * MINUTE);
      const report = await w.apps[0]!.router.reconcile();
      expect(report.writes).toEqual({
        examined: 1,
        resent: 1,
        resolved: 1,
        stillUnknown: 0,
        needsReview: 0,
        failed: 0,
      });
      expect((await w.entry("capture:p1"))?.state).toBe("done");
      expect(w.moves("capture")).toEqual(["10.00"]);
      // The press's send and the reconciler's: one key, one body.
      const sends = w.sendsOfFirst("capture");
      expect(sends).toHaveLength(2);
      expect(sends[1]).toEqual(sends[0]);
      expect(sends[1]!.input).toEqual({ amount: "10.00" });
      // Settled: the next pass has nothing to do, and a re-press is answered done without moving money.
      expect((await w.apps[0]!.router.reconcile()).writes.examined).toBe(0);
      const again = await w.press("capture", { amount: "10.00", sequence: "p1" });
      expect(again.json).toMatchObject({ status: "partially_captured", operation: { outcome: "done" } });
      expect(w.moves("capture")).toEqual(["10.00"]);
      expect(w.alerts).toEqual([]);
    });

    it("a partial capture that never reached the service is captured by the reconciler's send, once", async () => {
      const w = await world();
      await w.lost(NEVER_ARRIVED, "capture", { amount: "10.00", sequence: "p1" });
      expect(w.moves("capture")).toEqual([]);
      w.sandbox.advanceClock(2 * MINUTE);
      await w.apps[0]!.router.reconcile();
      await w.apps[0]!.router.reconcile();
      expect((await w.entry("capture:p1"))?.state).toBe("done");
      expect(w.moves("capture")).toEqual(["10.00"]);
    });

    it("a refund whose answer was lost, never pressed again: done, refunded once", async () => {
      const w = await world();
      expect((await w.press("capture", { amount: "20.00", sequence: "c1" })).status).toBe(200);
      await w.lost(ANSWER_LOST, "refund", { amount: "5.00", sequence: "r1" });
      w.sandbox.advanceClock(5 * MINUTE);
      const report = await w.apps[0]!.router.reconcile();
      expect(report.writes).toMatchObject({ examined: 1, resolved: 1 });
      expect((await w.entry("refund:r1"))?.state).toBe("done");
      expect(w.moves("refund")).toEqual(["5.00"]);
      const sends = w.sendsOfFirst("refund");
      expect(sends).toHaveLength(2);
      expect(sends[1]).toEqual(sends[0]);
      expect(w.alerts).toEqual([]);
    });

    it("a lost capture nobody pressed again until the key is forgotten: one alert and an ERROR line, unconfirmed, its key never sent again", async () => {
      const w = await world();
      await w.lost(ANSWER_LOST, "capture", { amount: "10.00", sequence: "p1" });
      w.sandbox.advanceClock(25 * HOUR);
      const report = await w.apps[0]!.router.reconcile();
      expect(report.writes).toEqual({
        examined: 1,
        resent: 0,
        resolved: 0,
        stillUnknown: 0,
        needsReview: 1,
        failed: 0,
      });
      expect(w.alerts).toEqual([
        expect.objectContaining({ kind: "needs_review", authorizationId: expect.any(String) }),
      ]);
      expect(w.alerts[0]!.message).toContain("capture p1");
      const errors = w.apps[0]!.errorLogs.map((line) => String(line[0]));
      expect(errors.filter((line) => line.includes("ALERT needs_review"))).toHaveLength(1);
      expect(JSON.stringify(w.apps[0]!.errorLogs)).not.toContain(w.data.merchant.clientSecret);
      expect((await w.entry("capture:p1"))?.state).toBe("unconfirmed");
      // Another pass and a re-press: no second alert, and the key is never sent again.
      expect((await w.apps[0]!.router.reconcile()).writes.examined).toBe(0);
      const again = await w.press("capture", { amount: "10.00", sequence: "p1" });
      expect(again.status).toBe(409);
      expect(again.json.type).toBe("urn:purchase-auth:problem:operation-unconfirmed");
      expect(w.sendsOfFirst("capture")).toHaveLength(1);
      expect(w.alerts).toHaveLength(1);
      expect(w.moves("capture")).toEqual(["10.00"]);
    });

    it("between the replay hour and the key's end too: never sent, unconfirmed with one alert", async () => {
      const w = await world();
      await w.lost(NEVER_ARRIVED, "refund", { amount: "5.00", sequence: "r1" });
      w.sandbox.advanceClock(2 * HOUR);
      await w.apps[0]!.router.reconcile();
      expect((await w.entry("refund:r1"))?.state).toBe("unconfirmed");
      expect(w.sendsOfFirst("refund")).toHaveLength(1);
      expect(w.alerts).toHaveLength(1);
    });

    it("a lost capture of the rest past the window is told by the order: done, no alert, its key not sent", async () => {
      const w = await world();
      await w.lost(ANSWER_LOST, "capture", { sequence: "rest-1" });
      expect(w.moves("capture")).toEqual(["49.80"]);
      w.sandbox.advanceClock(25 * HOUR);
      const report = await w.apps[0]!.router.reconcile();
      expect(report.writes).toMatchObject({ examined: 1, resolved: 1, needsReview: 0 });
      expect((await w.entry("capture:rest-1"))?.state).toBe("done");
      expect(w.sendsOfFirst("capture")).toHaveLength(1);
      expect(w.alerts).toEqual([]);
      expect((await w.stored())?.status).toBe("captured");
    });

    it("a lost cancel that never arrived, past the window, is told by the order: not applied, never sent again", async () => {
      const w = await world();
      await w.lost(NEVER_ARRIVED, "cancel", { sequence: "cancel-1" });
      w.sandbox.advanceClock(25 * HOUR);
      await w.apps[0]!.router.reconcile();
      // Its key is past the window: nothing will ever move under it.
      expect((await w.entry("cancel:cancel-1"))?.state).toBe("refused");
      expect(w.sendsOfFirst("cancel")).toHaveLength(1);
      expect(w.alerts).toEqual([]);
      const again = await w.press("cancel", { sequence: "cancel-1" });
      expect(again.json.type).toBe("urn:purchase-auth:problem:operation-not-applied");
      expect(w.sendsOfFirst("cancel")).toHaveLength(1);
      // A new sequence is a new write, and goes through.
      expect((await w.press("cancel", { sequence: "cancel-2" })).json.order.status).toBe("Cancelled");
    });

    for (const where of ["another instance", "the same instance"] as const) {
      it(`a reconcile pass racing a re-press of the same write on ${where} moves the money once`, async () => {
        // Instance 0's next order write waits, once it is armed, until the test lets it go.
        const write = holder();
        const w = await world(2, write.hold);
        await w.lost(NEVER_ARRIVED, "capture", { amount: "10.00", sequence: "p1" });
        w.sandbox.advanceClock(2 * MINUTE);
        write.arm();
        const pass = w.apps[0]!.router.reconcile();
        // The reconciler's send is on its way (or, with no send to make, the pass ends).
        const sent = await Promise.race([write.sending.then(() => true), pass.then(() => false)]);
        expect(sent).toBe(true);
        const presser = where === "another instance" ? 1 : 0;
        const pressed = w.press("capture", { amount: "10.00", sequence: "p1" }, presser);
        if (presser === 1) expect((await pressed).status).toBe(200);
        write.release();
        const report = await pass;
        const again = await pressed;
        expect(again.json).toMatchObject({ operation: { sequence: "p1", outcome: "done" } });
        expect(report.writes).toMatchObject({ examined: 1, resolved: 1 });
        expect(w.moves("capture")).toEqual(["10.00"]);
        expect((await w.entry("capture:p1"))?.state).toBe("done");
        // On one instance the re-press shares the reconciler's send: the key went out once more, not twice.
        if (presser === 0) expect(w.sendsOfFirst("capture")).toHaveLength(2);
        expect(w.alerts).toEqual([]);
      });
    }
  });
}
