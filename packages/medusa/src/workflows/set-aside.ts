import type { MedusaContainer } from "@medusajs/framework/types";
import { sumExact, toCentsRounded } from "../providers/purchase-auth/amounts";
import { knexOf } from "./lookups";

// A capture or refund row the reconcile job does again (recorded-writes.ts) is first set aside:
// soft-deleted, which Medusa itself never does to these rows, so Medusa's records no longer count it
// and it keeps its amount, who and why until its redo settles. Its order transaction, if it has one,
// stops counting with it (order-transactions.ts).

/** How soon after a row is set aside Medusa records its redo's row (a workflow's first step). */
const REDO_RECORDED_WITHIN_MS = 5 * 60_000;

export interface Recorded {
  id: string;
  raw_amount?: unknown;
  amount?: unknown;
  created_at: Date | string;
  /** Set on a row set aside for its redo (Medusa itself deletes rows for good). */
  deleted_at?: Date | string | null;
  created_by?: string | null;
  note?: string | null;
  refund_reason_id?: string | null;
  /** Where the pass counts the tries of a row set aside (recorded-writes-given-up.ts). */
  metadata?: Record<string, unknown> | null;
}

export interface Unsent {
  kind: "capture" | "refund";
  row: Recorded;
}

export function amountOf(row: Recorded): string {
  return sumExact([row.raw_amount ?? row.amount]);
}

/**
 * Sets the row aside (soft-deletes it), stamped with this process's clock, the clock Medusa stamps
 * the redo's row with (see redoRowOf); a row already set aside gets a fresh stamp.
 */
export async function setAsideNow(container: MedusaContainer, unsent: Unsent): Promise<Unsent> {
  const at = new Date();
  await knexOf(container).raw(`update ${unsent.kind} set deleted_at = ? where id = ?`, [at, unsent.row.id]);
  return { kind: unsent.kind, row: { ...unsent.row, deleted_at: at } };
}

/** A row of the payment set aside by an earlier run (Medusa never soft-deletes these rows). */
export async function setAsideRow(
  container: MedusaContainer,
  paymentId: string,
): Promise<Unsent | undefined> {
  for (const kind of ["capture", "refund"] as const) {
    const extra = kind === "refund" ? ", note, refund_reason_id" : "";
    const { rows } = await knexOf(container).raw(
      `select id, amount, raw_amount, created_at, deleted_at, created_by, metadata${extra} from ${kind}
       where payment_id = ? and deleted_at is not null order by created_at, id limit 1`,
      [paymentId],
    );
    if (rows[0]) return { kind, row: rows[0] as unknown as Recorded };
  }
  return undefined;
}

/**
 * The id of the row Medusa recorded, of the same kind and amount, within minutes after `unsent` was
 * last set aside: its redo (Medusa's workflow records a new row, then the provider sends it).
 */
export async function redoRowOf(
  container: MedusaContainer,
  paymentId: string,
  unsent: Unsent,
): Promise<string | undefined> {
  const from = new Date(unsent.row.deleted_at ?? 0);
  const { rows } = await knexOf(container).raw(
    `select id, amount, raw_amount from ${unsent.kind}
     where payment_id = ? and deleted_at is null and created_at >= ? and created_at < ?
     order by created_at, id`,
    [paymentId, from, new Date(from.getTime() + REDO_RECORDED_WITHIN_MS)],
  );
  const amount = toCentsRounded(amountOf(unsent.row));
  return (rows as unknown as Recorded[]).find((r) => toCentsRounded(amountOf(r)) === amount)?.id;
}

/** The payment's live rows of `kind`: their ids and what they add up to, in cents. */
export async function liveRows(
  container: MedusaContainer,
  kind: Unsent["kind"],
  paymentId: string,
): Promise<{ ids: Set<string>; total: bigint; rows: Recorded[] }> {
  const { rows } = await knexOf(container).raw(
    `select id, amount, raw_amount, created_at from ${kind} where payment_id = ? and deleted_at is null`,
    [paymentId],
  );
  const recorded = rows as unknown as Recorded[];
  return {
    ids: new Set(recorded.map((r) => r.id)),
    total: toCentsRounded(sumExact(recorded.map(amountOf))),
    rows: recorded,
  };
}

/**
 * The row set aside, removed for good once its redo settled. The payment's other rows set aside
 * get a fresh stamp: the redo's row was recorded after their stamps, and must not be taken for
 * theirs (see redoRowOf) when its amount is the same.
 */
export async function removeSetAside(
  container: MedusaContainer,
  paymentId: string,
  unsent: Unsent,
): Promise<void> {
  await knexOf(container).raw(`delete from ${unsent.kind} where id = ? and deleted_at is not null`, [
    unsent.row.id,
  ]);
  for (const kind of ["capture", "refund"] as const)
    await knexOf(container).raw(
      `update ${kind} set deleted_at = ? where payment_id = ? and deleted_at is not null`,
      [new Date(), paymentId],
    );
}
