import { expect, it } from "vitest";
import { followServiceOrder } from "../src/workflows/follow-service";
import { resendRecordedWrites } from "../src/workflows/recorded-writes";
import { RECORDED_WRITE_MAX_TRIES } from "../src/workflows/recorded-writes-given-up";
import { recordedWritesWorld } from "./support/recorded-writes-world";
import { syncProviderTests } from "./support/sync-provider-tests";

// A redo whose capture reached the service with its answer lost, while the service could not be
// read right after (so the pass took it for a passing failure), leaves the row set aside while the
// service holds its money; a follow of the service's event then records that money as the plugin's
// row. The pass took a row for the redo's only within 5 minutes of the try's start: a follow later
// than that (a webhook delivered again after the outage), then a run that redid the row (after a
// give-up and a person's answer, or simply a run more than 10 minutes later), sent it twice. Taking
// any later plugin row of its amount for the redo instead dropped the row unsent when that row was
// another capture (refund) of the same amount whose answer was lost. The two cannot be told apart
// from the service's figures: the pass asks a person (once about that row), and sends the row only
// when answered.

syncProviderTests("recorded-writes-lookalike", (t) => {
  const { container, paymentData, reviewReason, captureRow, answer, runClock } = recordedWritesWorld(
    t,
    "lookalike",
  );

  /** Makes the try's stamp, and the unknown write the provider keeps, older by `interval`. */
  async function tryMadeEarlier(paymentId: string, rowId: string, interval: string) {
    const earlier = `to_jsonb(to_char((now() - interval '${interval}') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
    await t
      .pg()
      .raw(
        `update capture set metadata = jsonb_set(metadata, '{purchase_auth_redo,redo_started_at}', ${earlier}) where id = ?`,
        [rowId],
      );
    await t.pg().raw(
      `update payment set metadata = jsonb_set(metadata, '{purchase_auth_unknown_capture,firstSentAt}', ${earlier})
       where id = ? and metadata->'purchase_auth_unknown_capture' is not null`,
      [paymentId],
    );
  }

  /** The provider kept the landed try's write, whose answer was lost. */
  async function expectKeptWrite(paymentId: string) {
    const { rows } = await t.pg().raw("select metadata from payment where id = ?", [paymentId]);
    expect(JSON.stringify(rows[0])).toContain("purchase_auth_unknown_capture");
  }

  /** One run in which the redo's capture reaches the service, its answer lost, the service unreadable. */
  async function runWithRedoLanded(orderId: string, now: number) {
    t.sandbox().injectFault({
      kind: "drop_after_commit",
      match: { method: "POST", path: `/manage/orders/${orderId}` },
      count: null,
    });
    const provider = t.provider();
    const serviceOrder = provider.serviceOrder.bind(provider);
    provider.serviceOrder = async () => {
      throw new Error("the service is unreachable");
    };
    try {
      expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    } finally {
      provider.serviceOrder = serviceOrder;
      t.sandbox().clearFaults();
    }
  }

  /** A capture of 40 set aside by earlier runs and tried `tries` times, made `age` ago. */
  async function setAsideTried(paymentId: string, rowId: string, tries: number, age: string, now: number) {
    const firstTried = new Date(now - 5 * 3_600_000).toISOString();
    await t.pg().raw(
      `insert into capture (id, amount, raw_amount, payment_id, created_at, updated_at, deleted_at, metadata)
         values (?, 40, jsonb_build_object('value', '40', 'precision', 20), ?, now() - interval '${age}', now(), now(),
                 jsonb_build_object('purchase_auth_redo', jsonb_build_object('tries', ?::int, 'first_tried_at', ?::text)))`,
      [rowId, paymentId, tries, firstTried],
    );
  }

  it("a redo that landed, given up on, followed a day after its try, is not sent a second time after the answer", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = "capt_landed_given_up";
    // Its next try is the last allowed one.
    await setAsideTried(paymentId, rowId, RECORDED_WRITE_MAX_TRIES - 1, "1 day", now);
    await runWithRedoLanded(orderId, now);
    // The service holds the 40; the row is set aside, given up on, the payment flagged.
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(String((await paymentData(paymentId)).review_reason)).toContain(rowId);

    // A day later the service's event, delivered again after the outage, is followed: Medusa
    // records the 40 as the plugin's row.
    await tryMadeEarlier(paymentId, rowId, "1 day");
    await expectKeptWrite(paymentId);
    await followServiceOrder(container(), orderId);
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });

    // A person answers, as the flag says, to have the job send it again: the job asks about the
    // plugin's row first, and sends nothing.
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 24 * 3_600_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });
    expect(await reviewReason(paymentId)).toMatch(new RegExp(`\\(${rowId}\\).*may have reached the service`));
    // Told that the plugin's row is this one, the person drops it: settled, nothing sent twice.
    await t.pg().raw("delete from capture where id = ?", [rowId]);
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 25 * 3_600_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
  });

  it("a redo that landed, followed 11 minutes after its try, is not sent a second time by the next run", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = "capt_landed_late_follow";
    await setAsideTried(paymentId, rowId, 1, "11 minutes", now);
    await runWithRedoLanded(orderId, now);
    // The service holds the 40; the row is set aside, not given up on.
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect((await paymentData(paymentId)).review_reason ?? null).toBeNull();

    // The service's event, delivered again 11 minutes later, is followed: Medusa records the 40.
    await tryMadeEarlier(paymentId, rowId, "11 minutes");
    await expectKeptWrite(paymentId);
    await followServiceOrder(container(), orderId);
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });

    // The next run (one skipped meanwhile, or the job late) asks a person, and sends nothing.
    await resendRecordedWrites(container(), new Date(now + 11 * 60_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });
    expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
    expect((await captureRow(rowId))?.deleted_at).not.toBeNull();
  });

  /** The plugin's captures of the payment (its records of the service's figures), oldest first. */
  async function pluginCaptures(paymentId: string): Promise<string[]> {
    const { rows } = await t
      .pg()
      .raw(
        "select id from capture where payment_id = ? and deleted_at is null and created_by = 'purchase-auth' order by created_at, id",
        [paymentId],
      );
    return (rows as { id: string }[]).map((r) => r.id);
  }

  async function setAmount(rowId: string, amount: number) {
    await t
      .pg()
      .raw(
        "update capture set amount = ?, raw_amount = jsonb_build_object('value', ?::text, 'precision', 20) where id = ?",
        [amount, String(amount), rowId],
      );
  }

  /** The provider's kept write of unknown outcome (a call whose answer was lost), made `interval` older. */
  async function unknownWriteMadeEarlier(paymentId: string, kind: "capture" | "refund", interval: string) {
    const key = `purchase_auth_unknown_${kind}`;
    const earlier = `to_jsonb(to_char((now() - interval '${interval}') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
    await t
      .pg()
      .raw(
        `update payment set metadata = jsonb_set(metadata, '{${key},firstSentAt}', ${earlier}) where id = ?`,
        [paymentId],
      );
  }

  /** An admin's capture (refund) of `amount` whose answer was lost, then the follow: the plugin's row. */
  async function lostAndFollowed(
    paymentId: string,
    orderId: string,
    kind: "capture" | "refund",
    amount: number,
  ) {
    await t.answerLost(() =>
      kind === "capture"
        ? t.payment.capturePayment({ payment_id: paymentId, amount })
        : t.payment.refundPayment({ payment_id: paymentId, amount }),
    );
    await followServiceOrder(container(), orderId);
  }

  it("another capture of the same amount, recorded by a follow while a person reviews, is asked about; answered, the row is sent", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = "capt_lookalike_other";
    await setAsideTried(paymentId, rowId, RECORDED_WRITE_MAX_TRIES, "2 days", now);
    await tryMadeEarlier(paymentId, rowId, "1 hour");
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("0.00");
    // While the person reviews, an admin's capture of 40 is lost and followed.
    await lostAndFollowed(paymentId, orderId, "capture", 40);
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });
    await unknownWriteMadeEarlier(paymentId, "capture", "1 hour");
    // The answer: the job asks about the plugin's row, the row is kept, nothing sent.
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 3_600_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(await reviewReason(paymentId)).toMatch(/may have reached the service/);
    expect((await captureRow(rowId))?.deleted_at).not.toBeNull();
    // Answered again (the plugin's row is not this one): sent.
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 3_700_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("80.00");
    expect(await t.recorded(paymentId)).toEqual({ captured: "80.00", refunded: "0.00" });
  });

  it("a row waiting for its next try is asked about, not dropped, when another capture of its amount is followed", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = "capt_lookalike_waiting";
    await setAsideTried(paymentId, rowId, 1, "2 days", now);
    await tryMadeEarlier(paymentId, rowId, "20 minutes");
    await setAmount(rowId, 25);
    await lostAndFollowed(paymentId, orderId, "capture", 25);
    await unknownWriteMadeEarlier(paymentId, "capture", "15 minutes");
    await resendRecordedWrites(container(), new Date(now));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("25.00");
    expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
    expect((await captureRow(rowId))?.deleted_at).not.toBeNull();
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 60_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("50.00");
  });

  it("a refund given up on, with another refund of its amount followed meanwhile, is kept and asked about", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    await t.payment.capturePayment({ payment_id: paymentId, amount: 100 });
    const now = runClock();
    const rowId = "refu_lookalike";
    await t.pg().raw(
      `insert into refund (id, amount, raw_amount, payment_id, created_at, updated_at, deleted_at, metadata)
         values (?, 30, jsonb_build_object('value', '30', 'precision', 20), ?, now() - interval '2 days', now(), now(),
                 jsonb_build_object('purchase_auth_redo', jsonb_build_object('tries', ?::int, 'first_tried_at', ?::text,
                   'redo_started_at', ?::text)))`,
      [
        rowId,
        paymentId,
        RECORDED_WRITE_MAX_TRIES,
        new Date(now - 6 * 3_600_000).toISOString(),
        new Date(Date.now() - 3_600_000).toISOString(),
      ],
    );
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    await lostAndFollowed(paymentId, orderId, "refund", 30);
    expect(await t.recorded(paymentId)).toEqual({ captured: "100.00", refunded: "30.00" });
    await unknownWriteMadeEarlier(paymentId, "refund", "1 hour");
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 3_600_000));
    const { rows } = await t
      .pg()
      .raw("select id from refund where id = ? and deleted_at is not null", [rowId]);
    expect(rows).toHaveLength(1);
    expect(await reviewReason(paymentId)).toMatch(/may have reached the service/);
    expect(t.serviceOrder(orderId)?.refundedAmount).toBe("30.00");
  });

  it("a flag Medusa erased, with another capture of the row's amount followed meanwhile, is written again and the row kept", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = "capt_lookalike_flag_lost";
    await setAsideTried(paymentId, rowId, RECORDED_WRITE_MAX_TRIES, "2 days", now);
    await tryMadeEarlier(paymentId, rowId, "1 hour");
    const before = await paymentData(paymentId);
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    await t.pg().raw("update payment set data = ? where id = ?", [before, paymentId]);
    await lostAndFollowed(paymentId, orderId, "capture", 40);
    await unknownWriteMadeEarlier(paymentId, "capture", "1 hour");
    await resendRecordedWrites(container(), new Date(now + 3_600_000));
    expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
    expect((await captureRow(rowId))?.deleted_at).not.toBeNull();
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
  });

  it("a lookalike followed within 5 minutes of the row's last try (the job's own cadence) is asked about, not taken for the redo", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(100);
    const now = runClock();
    const rowId = "capt_lookalike_in_window";
    // Tried once by the previous run (5 minutes ago, say), which failed without reaching the service.
    await setAsideTried(paymentId, rowId, 1, "2 days", now);
    await setAmount(rowId, 25);
    await tryMadeEarlier(paymentId, rowId, "3 minutes");
    // Between the two runs, another capture of 25 (an admin's) is lost and followed: the plugin's row.
    await lostAndFollowed(paymentId, orderId, "capture", 25);
    await unknownWriteMadeEarlier(paymentId, "capture", "15 minutes");
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("25.00");
    await resendRecordedWrites(container(), new Date(now));
    // Kept and asked about, as in the 20-minute case: it was taken for the redo and deleted unsent.
    expect(await captureRow(rowId)).toBeDefined();
    expect(await reviewReason(paymentId)).toContain(`(${rowId})`);
  });

  it("every lookalike is named, and one followed after a person was asked is asked about before the row is sent", async () => {
    const { paymentId, orderId } = await t.authorizedPayment(200);
    const now = runClock();
    const rowId = "capt_lookalike_two";
    await setAsideTried(paymentId, rowId, RECORDED_WRITE_MAX_TRIES, "2 days", now);
    await tryMadeEarlier(paymentId, rowId, "1 hour");
    expect(await resendRecordedWrites(container(), new Date(now))).toEqual([]);
    await lostAndFollowed(paymentId, orderId, "capture", 40);
    await unknownWriteMadeEarlier(paymentId, "capture", "1 hour");
    // The person answers: asked about the plugin's row.
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 3_600_000));
    const [first] = await pluginCaptures(paymentId);
    expect(await reviewReason(paymentId)).toContain(first!);
    // Another capture of 40 is lost and followed before the person answers again.
    await lostAndFollowed(paymentId, orderId, "capture", 40);
    await unknownWriteMadeEarlier(paymentId, "capture", "1 hour");
    const [, second] = await pluginCaptures(paymentId);
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("80.00");
    // Answered about the first: asked about both, nothing sent.
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 3_700_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("80.00");
    expect(await reviewReason(paymentId)).toMatch(new RegExp(`${first}, ${second}`));
    // Answered about both: sent.
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 3_800_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("120.00");
  });
});
