import { asValue } from "@medusajs/framework/awilix";
import type { MedusaContainer } from "@medusajs/framework/types";
import { ContainerRegistrationKeys, createMedusaContainer, Modules } from "@medusajs/framework/utils";
import { RECORDED_WRITE_GRACE_MS } from "../../src/workflows/recorded-writes";
import { RECORDED_WRITE_GIVE_UP_AFTER_MS } from "../../src/workflows/recorded-writes-given-up";
import { GIVEN_UP_KEY } from "../../src/workflows/recorded-writes-review";
import type { SyncProviderContext } from "./sync-provider-tests";

/**
 * What the tests of the recorded-writes pass's redo and give-up share: the job's container, rows
 * a crash kept from the service (made by hand), and reads of what Medusa and the service hold.
 */
export function recordedWritesWorld(t: SyncProviderContext, prefix: string) {
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

  /**
   * A capture row of `amount` as a process killed after Medusa recorded it leaves it: never sent.
   * With `extra` (`deleted_at, metadata` values), one set aside by earlier runs.
   */
  async function lostCapture(paymentId: string, amount: number, extra = "") {
    lost += 1;
    const id = `capt_${prefix}_${lost}`;
    await t.pg().raw(
      `insert into capture (id, amount, raw_amount, payment_id, created_at, updated_at${extra ? ", deleted_at, metadata" : ""})
         values (?, ?, jsonb_build_object('value', ?::text, 'precision', 20), ?, now(), now()${extra ? `, ${extra}` : ""})`,
      [id, amount, String(amount), paymentId],
    );
    return id;
  }

  /** `deleted_at, metadata` of a row set aside and tried `tries` times, the first over 4 h before `now`. */
  const triedFor = (tries: number, now: number) =>
    `now(), jsonb_build_object('purchase_auth_redo', jsonb_build_object('tries', ${tries}, 'first_tried_at', '${new Date(now - RECORDED_WRITE_GIVE_UP_AFTER_MS - 60_000).toISOString()}'))`;

  async function captureRow(id: string) {
    const { rows } = await t.pg().raw("select deleted_at, metadata from capture where id = ?", [id]);
    return rows[0] as { deleted_at: Date | null; metadata: Record<string, unknown> | null } | undefined;
  }

  async function paymentData(id: string) {
    const { rows } = await t.pg().raw("select data from payment where id = ?", [id]);
    return (rows[0] as { data: Record<string, unknown> }).data;
  }

  async function paymentMetadata(id: string) {
    const { rows } = await t.pg().raw("select metadata from payment where id = ?", [id]);
    return ((rows[0] as { metadata: Record<string, unknown> | null }).metadata ?? {}) as Record<
      string,
      unknown
    >;
  }

  /** The payment's review_reason, "" when it has none. */
  const reviewReason = async (id: string) => String((await paymentData(id)).review_reason ?? "");

  /** A person's answer, as the flag says: the review_reason and the metadata key removed. */
  async function answer(paymentId: string) {
    await t
      .pg()
      .raw(
        `update payment set data = data - 'review_reason', metadata = metadata - '${GIVEN_UP_KEY}' where id = ?`,
        [paymentId],
      );
  }

  async function liveCaptured(id: string) {
    const stored = await t.payment.retrievePayment(id, { relations: ["captures"] });
    return (stored.captures ?? []).reduce((sum, row) => sum + Number(row.amount), 0).toFixed(2);
  }

  /**
   * The job's ERROR lines about the payment. (The provider logs its own on each failed try: an
   * unanswered capture is settled before the next one is sent; its lines name `"paymentId"`.)
   */
  const errorsAbout = (paymentId: string) =>
    t.logLines.filter((line) => line.level === "error" && line.message.includes(`payment ${paymentId}`));

  /** A run's clock: after the grace that keeps a call on its way from being raced. */
  const runClock = () => Date.now() + RECORDED_WRITE_GRACE_MS + 60_000;

  return {
    container,
    lostCapture,
    triedFor,
    captureRow,
    paymentData,
    paymentMetadata,
    reviewReason,
    answer,
    liveCaptured,
    errorsAbout,
    runClock,
  };
}
