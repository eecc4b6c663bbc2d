import { expect, it } from "vitest";
import { resendRecordedWrites } from "../src/workflows/recorded-writes";
import {
  RECORDED_WRITE_GIVE_UP_AFTER_MS,
  RECORDED_WRITE_MAX_TRIES,
} from "../src/workflows/recorded-writes-given-up";
import { recordedWritesWorld } from "./support/recorded-writes-world";
import { syncProviderTests } from "./support/sync-provider-tests";

// A capture Medusa recorded that never reached the service (a process killed between the two) is
// set aside and redone by the reconcile job. A redo that fails every run (here the service never
// answers its capture; in a store, e.g., a refund whose refund reason was deleted, which Medusa's
// own workflow rejects) was tried on every run for ever, with an ERROR line each time. Now, after
// RECORDED_WRITE_MAX_TRIES tries over RECORDED_WRITE_GIVE_UP_AFTER_MS, the job gives up: the row
// stays set aside (Medusa shows what the service holds), the payment is flagged for a person
// (review_reason), one ERROR line says why, and later runs cost no request; a person's answer has
// it redone.

syncProviderTests("recorded-writes-given-up", (t) => {
  const world = recordedWritesWorld(t, "given_up");
  const { container, lostCapture, errorsAbout } = world;

  it("a redo that keeps failing is given up after the bound: set aside, flagged once, not sent again until the flag is cleared", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const rowId = await lostCapture(paymentId, 40);
    const first = world.runClock();
    const step = RECORDED_WRITE_GIVE_UP_AFTER_MS / (RECORDED_WRITE_MAX_TRIES - 1);
    t.sandbox().injectFault({
      kind: "unavailable",
      match: { method: "POST", path: `/manage/orders/${orderId}` },
      count: null,
    });
    try {
      // Every try reaches the service, and fails; the last one is both the 5th and 4 h after the first.
      for (let run = 0; run < RECORDED_WRITE_MAX_TRIES; run++) {
        const before = t.sandbox().stats().requests;
        expect(await resendRecordedWrites(container(), new Date(first + run * step))).toEqual([]);
        expect(t.sandbox().stats().requests - before).toBeGreaterThan(0);
        expect((await world.captureRow(rowId))?.deleted_at).not.toBeNull();
      }
      // Given up: one ERROR line naming the payment, the kind, the amount and the last failure.
      const errors = errorsAbout(paymentId);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.message).toMatch(/needs review/);
      expect(errors[0]!.message).toContain(`capture ${rowId} of 40`);
      expect(errors[0]!.message).toMatch(/did not answer in time/);
      // The row stays set aside: Medusa shows what the service holds, nothing captured.
      const row = await world.captureRow(rowId);
      expect(row?.deleted_at).not.toBeNull();
      expect(row?.metadata).toMatchObject({
        purchase_auth_redo: {
          tries: RECORDED_WRITE_MAX_TRIES,
          given_up_at: expect.any(String),
          last_error: expect.stringMatching(/did not answer in time/),
        },
      });
      expect(await world.liveCaptured(paymentId)).toBe("0.00");
      expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");
      // The payment is flagged for a person, as the admin widget shows it, and its metadata names
      // the row (Medusa never writes it back).
      expect(String((await world.paymentData(paymentId)).review_reason)).toMatch(
        new RegExp(`capture of 40.*${rowId}.*gave up`),
      );
      expect(await world.paymentMetadata(paymentId)).toMatchObject({
        purchase_auth_given_up: { kind: "capture", row_id: rowId },
      });
      // Later runs skip it: no request, no line.
      const lines = t.logLines.length;
      for (const hours of [1, 5, 24]) {
        const before = t.sandbox().stats().requests;
        const at = new Date(first + RECORDED_WRITE_GIVE_UP_AFTER_MS + hours * 3_600_000);
        expect(await resendRecordedWrites(container(), at)).toEqual([]);
        expect(t.sandbox().stats().requests - before).toBe(0);
      }
      expect(t.logLines.slice(lines).filter((line) => line.message.includes(paymentId))).toEqual([]);
    } finally {
      t.sandbox().clearFaults();
    }
    // A person answers (the service answers again): the next run redoes it, and it lands.
    await world.answer(paymentId);
    const later = new Date(first + RECORDED_WRITE_GIVE_UP_AFTER_MS + 25 * 3_600_000);
    expect(await resendRecordedWrites(container(), later)).toEqual([paymentId]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(await world.liveCaptured(paymentId)).toBe("40.00");
    expect(await world.captureRow(rowId)).toBeUndefined();
    expect((await world.paymentData(paymentId)).review_reason ?? null).toBeNull();
    expect(errorsAbout(paymentId)).toHaveLength(1);
  });

  it("a row whose last allowed try a crash cut short is given up without another request", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(50);
    const now = world.runClock();
    // Set aside by earlier runs, tried the allowed number of times, the last one never finished.
    const rowId = await lostCapture(paymentId, 20, world.triedFor(RECORDED_WRITE_MAX_TRIES, now));
    const before = t.sandbox().stats().requests;
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    expect(t.sandbox().stats().requests - before).toBe(0);
    const errors = errorsAbout(paymentId);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain(`capture ${rowId} of 20`);
    expect((await world.captureRow(rowId))?.deleted_at).not.toBeNull();
    expect(String((await world.paymentData(paymentId)).review_reason)).toContain(rowId);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");
  });
});
