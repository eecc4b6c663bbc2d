import { expect, it } from "vitest";
import { followServiceOrder } from "../src/workflows/follow-service";
import { resendRecordedWrites } from "../src/workflows/recorded-writes";
import { RECORDED_WRITE_MAX_TRIES } from "../src/workflows/recorded-writes-given-up";
import { recordedWritesWorld } from "./support/recorded-writes-world";
import { syncProviderTests } from "./support/sync-provider-tests";

// A redo whose capture reached the service with its answer lost, when the service could not be
// read right after (so the pass took it for a passing failure), leaves the row set aside while the
// service holds its money. A follow of the service's event then records that money as the plugin's
// row. The pass took a row for the redo's only within 5 minutes of the try's start: a follow later
// than that (a webhook delivered again after the outage), then a run that redoes the row (after a
// give-up and a person's answer, or simply a run more than 10 minutes later), sent it twice. Now
// the plugin's record of the service's figures of that amount counts as the redo however late.

syncProviderTests("recorded-writes-landed-redo", (t) => {
  const { container, paymentData, answer, runClock } = recordedWritesWorld(t, "landed");

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
    const { rows: kept } = await t.pg().raw("select metadata from payment where id = ?", [paymentId]);
    expect(JSON.stringify(kept[0])).toContain("purchase_auth_unknown_capture");
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
    await followServiceOrder(container(), orderId);
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });

    // A person answers, as the flag says, to have the job send it again: it is recognised as done.
    await answer(paymentId);
    await resendRecordedWrites(container(), new Date(now + 24 * 3_600_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });
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
    await followServiceOrder(container(), orderId);
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });

    // The next run (one skipped meanwhile, or the job late) recognises the redo.
    await resendRecordedWrites(container(), new Date(now + 11 * 60_000));
    expect(t.serviceOrder(orderId)?.capturedAmount).toBe("40.00");
    expect(await t.recorded(paymentId)).toEqual({ captured: "40.00", refunded: "0.00" });
  });
});
