import { expect, it, vi } from "vitest";
import { withPaymentLock } from "../src/workflows/payment-lock";
import { resendRecordedWrites } from "../src/workflows/recorded-writes";
import { RECORDED_WRITE_MAX_TRIES } from "../src/workflows/recorded-writes-given-up";
import { recordedWritesWorld } from "./support/recorded-writes-world";
import { syncProviderTests } from "./support/sync-provider-tests";

// A redo given up on asks a person (recorded-writes-review.ts): the payment's review_reason names
// the row and the rows waiting behind it, and the payment's metadata names the row until a person
// answers. Medusa writes a payment's data back after each capture, refund or cancel as it read it
// before the call, which erased a flag written meanwhile; the next run took that for a person's
// answer and sent the row again, unreviewed. Now a lost flag is written again, and only a person's
// answer (review_reason and the metadata key removed) has the row sent again.

syncProviderTests("recorded-writes-review", (t) => {
  const {
    container,
    lostCapture,
    triedFor,
    captureRow,
    paymentData,
    reviewReason,
    answer,
    liveCaptured,
    errorsAbout,
    runClock,
  } = recordedWritesWorld(t, "review");

  /** Sessions waiting for an advisory lock another holds. */
  async function lockWaiters(): Promise<number> {
    const { rows } = await t
      .pg()
      .raw("select count(*)::int as waiting from pg_locks where locktype = 'advisory' and not granted", []);
    return (rows[0] as { waiting: number }).waiting;
  }

  /** Medusa writing the payment's data back as it read it before the flag (a capture, refund, cancel). */
  async function dataWrittenBack(paymentId: string, data: Record<string, unknown>) {
    await t.pg().raw("update payment set data = ? where id = ?", [data, paymentId]);
  }

  /** A promise and the function that settles it. */
  function gate() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { opened, open };
  }

  it("the review reason names the rows set aside behind the one given up on, which are sent once it is dropped", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const givenUp = await lostCapture(paymentId, 40, triedFor(RECORDED_WRITE_MAX_TRIES, now));
    // Set aside with it by the same run, never tried: it waits for its turn.
    const waiting = await lostCapture(paymentId, 30, "now(), null");
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    const reason = await reviewReason(paymentId);
    expect(reason).toContain(`(${givenUp})`);
    expect(reason).toMatch(new RegExp(`behind it.*capture ${waiting} of 30\\.00`));
    expect(errorsAbout(paymentId)[0]!.message).toContain(`capture ${waiting} of 30.00`);
    expect((await captureRow(waiting))?.deleted_at).not.toBeNull();
    // As the reason says: the one given up on deleted, the person's answer, the one waiting is sent.
    await t.pg().raw("delete from capture where id = ?", [givenUp]);
    await answer(paymentId);
    expect(await resendRecordedWrites(container(), new Date(now + 60_000))).toEqual([paymentId]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("30.00");
    expect(await liveCaptured(paymentId)).toBe("30.00");
  });

  it("a row that waited behind a dropped give-up, given up in turn, is named as given up", async () => {
    const { paymentId } = await t.authorizedPayment(100);
    const now = runClock();
    const givenUp = await lostCapture(paymentId, 40, triedFor(RECORDED_WRITE_MAX_TRIES, now));
    const waiting = await lostCapture(paymentId, 30, "now(), null");
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    expect(await reviewReason(paymentId)).toContain(`capture ${waiting} of 30.00`);
    // A person drops the one given up on, not answering yet; the one waiting is then tried out.
    await t.pg().raw("delete from capture where id = ?", [givenUp]);
    await t.pg().raw("update capture set metadata = ? where id = ?", [
      {
        purchase_auth_redo: { tries: RECORDED_WRITE_MAX_TRIES, first_tried_at: new Date(0).toISOString() },
      },
      waiting,
    ]);
    expect(await resendRecordedWrites(container(), new Date(now + 60_000))).toEqual([]);
    expect(errorsAbout(paymentId)).toHaveLength(2);
    expect(await reviewReason(paymentId)).toContain(`(${waiting}) that a crash kept from the service`);
  });

  it("a give-up is added to another review pending, once; a lost flag is written again, and only an answer has the row sent", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(60);
    const now = runClock();
    const rowId = await lostCapture(paymentId, 20, triedFor(RECORDED_WRITE_MAX_TRIES, now));
    await t
      .pg()
      .raw(
        "update payment set data = data || jsonb_build_object('review_reason', 'Another check') where id = ?",
        [paymentId],
      );
    const before = await paymentData(paymentId);
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    const reason = await reviewReason(paymentId);
    expect(reason).toMatch(
      new RegExp(`^Another check\\n\\nMedusa recorded a capture of 20\\.00 \\(${rowId}\\)`),
    );
    // Later runs skip it: no request, no line.
    const lines = t.logLines.length;
    expect(await resendRecordedWrites(container(), new Date(now + 60_000))).toEqual([]);
    expect(t.logLines.slice(lines).filter((line) => line.message.includes(paymentId))).toEqual([]);

    // Medusa writes the data back as it read it before the give-up: the flag is written again,
    // once, with a WARN line, and nothing is sent.
    await dataWrittenBack(paymentId, before);
    const requests = t.sandbox().stats().requests;
    expect(await resendRecordedWrites(container(), new Date(now + 120_000))).toEqual([]);
    expect(await reviewReason(paymentId)).toBe(reason);
    expect(t.logLines.slice(lines).filter((line) => line.level === "warn")).toHaveLength(1);
    expect(await resendRecordedWrites(container(), new Date(now + 180_000))).toEqual([]);
    expect(await reviewReason(paymentId)).toBe(reason);
    // A person removing only the give-up's text, the other review left open: written again too.
    await dataWrittenBack(paymentId, { ...before, review_reason: "Another check" });
    expect(await resendRecordedWrites(container(), new Date(now + 240_000))).toEqual([]);
    expect(await reviewReason(paymentId)).toBe(reason);
    expect(t.sandbox().stats().requests).toBe(requests);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");

    // The answer: the row is sent.
    await answer(paymentId);
    expect(await resendRecordedWrites(container(), new Date(now + 300_000))).toEqual([paymentId]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("20.00");
    expect(errorsAbout(paymentId)).toHaveLength(1);
  });

  it("a give-up during an admin's capture keeps the row from being sent until a person answers", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = await lostCapture(paymentId, 40, triedFor(RECORDED_WRITE_MAX_TRIES, now));
    // An admin captures 10: Medusa read the payment's data, its provider call is on its way.
    const provider = t.provider();
    const capturePayment = provider.capturePayment.bind(provider);
    const calling = gate();
    const letGo = gate();
    provider.capturePayment = async (input) => {
      calling.open();
      await letGo.opened;
      return await capturePayment(input);
    };
    try {
      const admin = t.payment.capturePayment({ payment_id: paymentId, amount: 10 });
      await calling.opened;
      expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
      expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
      letGo.open();
      await admin;
    } finally {
      provider.capturePayment = capturePayment;
    }
    // Medusa wrote back the data it read before the give-up.
    expect(await reviewReason(paymentId)).toBe("");
    // The next run writes the flag again and sends nothing.
    expect(await resendRecordedWrites(container(), new Date(now + 5 * 60_000))).toEqual([]);
    expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("10.00");
    // A person answers: sent.
    await answer(paymentId);
    expect(await resendRecordedWrites(container(), new Date(now + 10 * 60_000))).toEqual([paymentId]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("50.00");
  });

  it("a follow writing the payment's data back while the job gives up does not drop the flag", async () => {
    const { paymentId } = await t.authorizedPayment(80);
    const now = runClock();
    // Its next try is its last allowed one.
    const rowId = await lostCapture(paymentId, 25, triedFor(RECORDED_WRITE_MAX_TRIES - 1, now));
    // The redo's capture fails (the service unreachable), once the test lets it.
    const provider = t.provider();
    const capturePayment = provider.capturePayment;
    const inRedo = gate();
    const letGo = gate();
    provider.capturePayment = async () => {
      inRedo.open();
      await letGo.opened;
      throw new Error("the service is unreachable");
    };
    try {
      const job = resendRecordedWrites(container(), new Date(now));
      await inRedo.opened;
      // A follow holds the payment's lock: it read the data before the job gives up, and writes it
      // back after the job gave up, or while the job waits for the lock to do so.
      await withPaymentLock(container(), paymentId, async () => {
        const read = await paymentData(paymentId);
        letGo.open();
        await Promise.race([
          job,
          vi.waitFor(async () => expect(await lockWaiters()).toBeGreaterThan(0), { timeout: 10_000 }),
        ]);
        await dataWrittenBack(paymentId, read);
      });
      expect(await job).toEqual([]);
    } finally {
      provider.capturePayment = capturePayment;
    }
    expect(errorsAbout(paymentId)).toHaveLength(1);
    expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
  });

  it("a row given up by the previous version (flag in data only) is not sent when Medusa erases the flag", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = await lostCapture(paymentId, 40, triedFor(RECORDED_WRITE_MAX_TRIES, now));
    const before = await paymentData(paymentId);
    // What the previous version's giveUp wrote: the flag (old text), then the row's given_up_at.
    const oldReason = `Medusa recorded a capture of 40.00 (${rowId}) that never reached the service, and the reconcile job gave up sending it again after 5 tries since x; it is set aside, so Medusa shows what the service holds. See the job's ERROR line for why. To have the job send it again, clear this review_reason; to drop it, delete the set-aside capture row, then clear this review_reason.`;
    await t
      .pg()
      .raw("update payment set data = data || jsonb_build_object('review_reason', ?::text) where id = ?", [
        oldReason,
        paymentId,
      ]);
    await t
      .pg()
      .raw(
        `update capture set metadata = jsonb_set(metadata, '{purchase_auth_redo,given_up_at}', to_jsonb(?::text)) where id = ?`,
        [new Date(now).toISOString(), rowId],
      );
    // The upgraded job skips it while flagged.
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");
    // Medusa writes back the data it read before the flag.
    await t.pg().raw("update payment set data = ? where id = ?", [before, paymentId]);
    expect(await reviewReason(paymentId)).toBe("");
    await resendRecordedWrites(container(), new Date(now + 5 * 60_000));
    // Nobody answered: nothing may be sent, the flag must be back.
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");
    expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
  });
});
