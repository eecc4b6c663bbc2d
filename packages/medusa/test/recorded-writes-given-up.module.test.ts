import { asValue } from "@medusajs/framework/awilix";
import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, createMedusaContainer, Modules } from "@medusajs/framework/utils";
import { expect, it, vi } from "vitest";
import { withPaymentLock } from "../src/workflows/payment-lock";
import { RECORDED_WRITE_GRACE_MS, resendRecordedWrites } from "../src/workflows/recorded-writes";
import {
  RECORDED_WRITE_GIVE_UP_AFTER_MS,
  RECORDED_WRITE_MAX_TRIES,
} from "../src/workflows/recorded-writes-given-up";
import { syncProviderTests } from "./support/sync-provider-tests";

// A capture Medusa recorded that never reached the service (a process killed between the two) is
// set aside and redone by the reconcile job. A redo that fails every run (here the service never
// answers its capture; in a store, e.g., a refund whose refund reason was deleted, which Medusa's
// own workflow rejects) was tried on every run for ever, with an ERROR line each time. Now, after
// RECORDED_WRITE_MAX_TRIES tries over RECORDED_WRITE_GIVE_UP_AFTER_MS, the job gives up: the row
// stays set aside (Medusa shows what the service holds), the payment is flagged for a person
// (review_reason), one ERROR line says why, and later runs cost no request; clearing the flag has
// it redone.

syncProviderTests("recorded-writes-given-up", (t) => {
  const { payment } = t;
  let lost = 0;

  /**
   * The job's container, with what Medusa's capture workflow resolves besides the payment module:
   * the module runner has no order module (no order is found for the payment) and no event bus. An
   * awilix container: a workflow copies its registrations.
   */
  const container = (): MedusaContainer => {
    const base = t.container();
    const registered = createMedusaContainer();
    for (const key of [
      Modules.PAYMENT,
      ContainerRegistrationKeys.LOGGER,
      ContainerRegistrationKeys.PG_CONNECTION,
    ])
      registered.register(key, asValue(base.resolve(key)));
    registered.register(
      ContainerRegistrationKeys.REMOTE_QUERY,
      asValue(async () => []),
    );
    registered.register(
      Modules.EVENT_BUS,
      asValue({
        emit: async () => {},
        releaseGroupedEvents: async () => {},
        clearGroupedEvents: async () => {},
      }),
    );
    return registered as unknown as MedusaContainer;
  };

  /** A capture row of `amount` as a process killed after Medusa recorded it leaves it: never sent. */
  async function lostCapture(paymentId: string, amount: number, extra = "") {
    lost += 1;
    const id = `capt_lost_${lost}`;
    await t.pg().raw(
      `insert into capture (id, amount, raw_amount, payment_id, created_at, updated_at${extra ? ", deleted_at, metadata" : ""})
         values (?, ?, jsonb_build_object('value', ?::text, 'precision', 20), ?, now(), now()${extra ? `, ${extra}` : ""})`,
      [id, amount, String(amount), paymentId],
    );
    return id;
  }

  async function captureRow(id: string) {
    const { rows } = await t.pg().raw("select deleted_at, metadata from capture where id = ?", [id]);
    return rows[0] as { deleted_at: Date | null; metadata: Record<string, unknown> | null } | undefined;
  }

  async function paymentData(id: string) {
    const { rows } = await t.pg().raw("select data from payment where id = ?", [id]);
    return (rows[0] as { data: Record<string, unknown> }).data;
  }

  async function liveCaptured(id: string) {
    const stored = await payment.retrievePayment(id, { relations: ["captures"] });
    return (stored.captures ?? []).reduce((sum, row) => sum + Number(row.amount), 0).toFixed(2);
  }

  /**
   * The job's ERROR lines about the payment. (The provider logs its own on each failed try: an
   * unanswered capture is settled before the next one is sent; its lines name `"paymentId"`.)
   */
  const errorsAbout = (paymentId: string) =>
    t.logLines.filter((line) => line.level === "error" && line.message.includes(`payment ${paymentId}`));

  /** Redo tries as a row set aside by earlier runs carries them: `tries`, the first over 4 h ago. */
  const triedFor = (tries: number, now: number) =>
    `now(), jsonb_build_object('purchase_auth_redo', jsonb_build_object('tries', ${tries}, 'first_tried_at', '${new Date(now - RECORDED_WRITE_GIVE_UP_AFTER_MS - 60_000).toISOString()}'))`;

  /** Sessions waiting for an advisory lock another holds. */
  async function lockWaiters(): Promise<number> {
    const { rows } = await t
      .pg()
      .raw("select count(*)::int as waiting from pg_locks where locktype = 'advisory' and not granted", []);
    return (rows[0] as { waiting: number }).waiting;
  }

  it("a redo that keeps failing is given up after the bound: set aside, flagged once, not sent again until the flag is cleared", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const rowId = await lostCapture(paymentId, 40);
    const first = Date.now() + RECORDED_WRITE_GRACE_MS + 60_000;
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
        expect((await captureRow(rowId))?.deleted_at).not.toBeNull();
      }
      // Given up: one ERROR line naming the payment, the kind, the amount and the last failure.
      const errors = errorsAbout(paymentId);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.message).toMatch(/needs review/);
      expect(errors[0]!.message).toContain(`capture ${rowId} of 40`);
      expect(errors[0]!.message).toMatch(/did not answer in time/);
      // The row stays set aside: Medusa shows what the service holds, nothing captured.
      const row = await captureRow(rowId);
      expect(row?.deleted_at).not.toBeNull();
      expect(row?.metadata).toMatchObject({
        purchase_auth_redo: {
          tries: RECORDED_WRITE_MAX_TRIES,
          given_up_at: expect.any(String),
          last_error: expect.stringMatching(/did not answer in time/),
        },
      });
      expect(await liveCaptured(paymentId)).toBe("0.00");
      expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");
      // The payment is flagged for a person, as the admin widget shows it.
      expect(String((await paymentData(paymentId)).review_reason)).toMatch(
        new RegExp(`capture of 40.*${rowId}.*gave up`),
      );
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
    // A person clears the flag (the service answers again): the next run redoes it, and it lands.
    await t.pg().raw("update payment set data = data - 'review_reason' where id = ?", [paymentId]);
    const later = new Date(first + RECORDED_WRITE_GIVE_UP_AFTER_MS + 25 * 3_600_000);
    expect(await resendRecordedWrites(container(), later)).toEqual([paymentId]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(await liveCaptured(paymentId)).toBe("40.00");
    expect(await captureRow(rowId)).toBeUndefined();
    expect((await paymentData(paymentId)).review_reason ?? null).toBeNull();
    expect(errorsAbout(paymentId)).toHaveLength(1);
  });

  it("a row whose last allowed try a crash cut short is given up without another request", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(50);
    const now = Date.now() + RECORDED_WRITE_GRACE_MS + 60_000;
    const firstTried = new Date(now - RECORDED_WRITE_GIVE_UP_AFTER_MS - 60_000).toISOString();
    // Set aside by earlier runs, tried the allowed number of times, the last one never finished.
    const rowId = await lostCapture(
      paymentId,
      20,
      `now(), jsonb_build_object('purchase_auth_redo', jsonb_build_object('tries', ${RECORDED_WRITE_MAX_TRIES}, 'first_tried_at', '${firstTried}'))`,
    );
    const before = t.sandbox().stats().requests;
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    expect(t.sandbox().stats().requests - before).toBe(0);
    const errors = errorsAbout(paymentId);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain(`capture ${rowId} of 20`);
    expect((await captureRow(rowId))?.deleted_at).not.toBeNull();
    expect(String((await paymentData(paymentId)).review_reason)).toContain(rowId);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");
  });

  it("the review reason names the rows set aside behind the one given up on, which are sent once it is dropped", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = Date.now() + RECORDED_WRITE_GRACE_MS + 60_000;
    const givenUp = await lostCapture(paymentId, 40, triedFor(RECORDED_WRITE_MAX_TRIES, now));
    // Set aside with it by the same run, never tried: it waits for its turn.
    const waiting = await lostCapture(paymentId, 30, "now(), null");
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    const reason = String((await paymentData(paymentId)).review_reason);
    expect(reason).toContain(givenUp);
    expect(reason).toMatch(new RegExp(`behind it.*capture ${waiting} of 30\\.00`));
    expect(errorsAbout(paymentId)[0]!.message).toContain(`capture ${waiting} of 30.00`);
    expect((await captureRow(waiting))?.deleted_at).not.toBeNull();
    // As the reason says: the one given up on deleted, the flag cleared, the one waiting is sent.
    await t.pg().raw("delete from capture where id = ?", [givenUp]);
    await t.pg().raw("update payment set data = data - 'review_reason' where id = ?", [paymentId]);
    expect(await resendRecordedWrites(container(), new Date(now + 60_000))).toEqual([paymentId]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("30.00");
    expect(await liveCaptured(paymentId)).toBe("30.00");
  });

  it("a payment already flagged for another review gets the give-up added to its reason, once", async () => {
    const { paymentId } = await t.authorizedPayment(60);
    const now = Date.now() + RECORDED_WRITE_GRACE_MS + 60_000;
    const rowId = await lostCapture(paymentId, 20, triedFor(RECORDED_WRITE_MAX_TRIES, now));
    await t
      .pg()
      .raw(
        "update payment set data = data || jsonb_build_object('review_reason', 'Another check is pending') where id = ?",
        [paymentId],
      );
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    const reason = String((await paymentData(paymentId)).review_reason);
    expect(reason).toMatch(
      new RegExp(`^Another check is pending\n\nMedusa recorded a capture of 20\\.00 \\(${rowId}\\)`),
    );
    // A crash between the flag and the row's stamp: the next run gives up again, and says it once.
    await t
      .pg()
      .raw("update capture set metadata = metadata #- '{purchase_auth_redo,given_up_at}' where id = ?", [
        rowId,
      ]);
    expect(await resendRecordedWrites(container(), new Date(now + 60_000))).toEqual([]);
    expect(errorsAbout(paymentId)).toHaveLength(2);
    expect(String((await paymentData(paymentId)).review_reason)).toBe(reason);
  });

  it("a follow writing the payment's data back while the job gives up does not drop the flag", async () => {
    const { paymentId } = await t.authorizedPayment(80);
    const now = Date.now() + RECORDED_WRITE_GRACE_MS + 60_000;
    // Its next try is its last allowed one.
    const rowId = await lostCapture(paymentId, 25, triedFor(RECORDED_WRITE_MAX_TRIES - 1, now));
    // The redo's capture fails (the service unreachable), once the test lets it.
    const provider = t.provider();
    const capturePayment = provider.capturePayment;
    let redoing!: () => void;
    const inRedo = new Promise<void>((resolve) => {
      redoing = resolve;
    });
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    provider.capturePayment = async () => {
      redoing();
      await gate;
      throw new Error("the service is unreachable");
    };
    try {
      const job = resendRecordedWrites(container(), new Date(now));
      await inRedo;
      // A follow holds the payment's lock: it read the data before the job gives up, and writes it
      // back after the job gave up, or while the job waits for the lock to do so.
      await withPaymentLock(container(), paymentId, async () => {
        const read = await paymentData(paymentId);
        letGo();
        await Promise.race([
          job,
          vi.waitFor(async () => expect(await lockWaiters()).toBeGreaterThan(0), { timeout: 10_000 }),
        ]);
        await t.pg().raw("update payment set data = ? where id = ?", [read, paymentId]);
      });
      expect(await job).toEqual([]);
    } finally {
      provider.capturePayment = capturePayment;
    }
    expect(errorsAbout(paymentId)).toHaveLength(1);
    expect(String((await paymentData(paymentId)).review_reason)).toContain(rowId);
  });
});
