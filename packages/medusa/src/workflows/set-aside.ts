import type { MedusaContainer } from "@medusajs/framework/types";
import { sumExact, toCentsRounded } from "../providers/purchase-auth/amounts";
import { RECORDED_BY_PLUGIN } from "../providers/purchase-auth/payment-module-records";
import { knexOf } from "./lookups";
import { redoTriesOf } from "./recorded-writes-given-up";

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
 * Sets the rows aside (soft-deletes them), in one statement: a crash leaves all of them or none
 * (a live one among them would get the redo's amount from Medusa's workflow). A row already set
 * aside gets a fresh stamp.
 */
export async function setAsideNow(
  container: MedusaContainer,
  kind: Unsent["kind"],
  rows: Recorded[],
): Promise<void> {
  await knexOf(container).raw(`update ${kind} set deleted_at = ? where id = any(?)`, [
    new Date(),
    rows.map((row) => row.id),
  ]);
}

/** The oldest row of the payment set aside by an earlier run (Medusa never soft-deletes these rows). */
export async function setAsideRow(
  container: MedusaContainer,
  paymentId: string,
): Promise<Unsent | undefined> {
  return (await setAsideRows(container, paymentId, 1))[0];
}

/** The payment's rows set aside, in the order they are redone: captures, then refunds, oldest first. */
export async function setAsideRows(
  container: MedusaContainer,
  paymentId: string,
  limit = 100,
): Promise<Unsent[]> {
  const found: Unsent[] = [];
  for (const kind of ["capture", "refund"] as const) {
    if (found.length >= limit) break;
    const extra = kind === "refund" ? ", note, refund_reason_id" : "";
    const { rows } = await knexOf(container).raw(
      `select id, amount, raw_amount, created_at, deleted_at, created_by, metadata${extra} from ${kind}
       where payment_id = ? and deleted_at is not null order by created_at, id limit ?`,
      [paymentId, limit - found.length],
    );
    for (const row of rows as unknown as Recorded[]) found.push({ kind, row });
  }
  return found;
}

/**
 * The id of the row Medusa recorded for the last try of `unsent`'s redo: of its kind, amount and
 * who, within minutes after the try began (Medusa's workflow records a new row, then the provider
 * sends it). None for a row never tried: a row of the same amount recorded while it waited is
 * someone else's. The plugin's record of the service's figures is not taken for it (lookalikesOf),
 * unless the row is the plugin's own record too.
 */
export async function redoRowOf(
  container: MedusaContainer,
  paymentId: string,
  unsent: Unsent,
): Promise<string | undefined> {
  const started = redoTriesOf(unsent.row.metadata).redo_started_at;
  if (!started) return undefined;
  const from = new Date(started);
  const { rows } = await knexOf(container).raw(
    `select id, amount, raw_amount, created_by from ${unsent.kind}
     where payment_id = ? and deleted_at is null and created_at >= ? and created_at < ?
     order by created_at, id`,
    [paymentId, from, new Date(from.getTime() + REDO_RECORDED_WITHIN_MS)],
  );
  return (rows as unknown as Recorded[]).find((r) => isRedoOf(r, unsent.row))?.id;
}

/**
 * The plugin's records of the service's figures of `unsent`'s amount made since its last try began
 * (not the row's own redo: redoRowOf), oldest first. Each may be that try, which reached the
 * service with its answer lost, followed without it; or someone else's capture (refund) of the same
 * amount whose answer was lost. Sending the row would capture (refund) twice in the first case,
 * dropping it would lose it in the second: a person decides.
 */
export async function lookalikesOf(
  container: MedusaContainer,
  paymentId: string,
  unsent: Unsent,
): Promise<string[]> {
  const started = redoTriesOf(unsent.row.metadata).redo_started_at;
  if (!started || unsent.row.created_by === RECORDED_BY_PLUGIN) return [];
  const { rows } = await knexOf(container).raw(
    `select id, amount, raw_amount, created_by from ${unsent.kind}
     where payment_id = ? and deleted_at is null and created_at >= ? and created_by = ?
     order by created_at, id`,
    [paymentId, new Date(started), RECORDED_BY_PLUGIN],
  );
  const amount = toCentsRounded(amountOf(unsent.row));
  return (rows as unknown as Recorded[])
    .filter((r) => toCentsRounded(amountOf(r)) === amount)
    .map((r) => r.id);
}

/**
 * True when `row` has the amount and the who of `setAside`, as the redo's row does. The plugin's
 * own record of the service's figures only for a row the plugin recorded itself (a canceled order's
 * refund): for anyone else's it is a lookalike (lookalikesOf).
 */
export function isRedoOf(row: Recorded, setAside: Recorded): boolean {
  return (
    toCentsRounded(amountOf(row)) === toCentsRounded(amountOf(setAside)) &&
    (row.created_by ?? null) === (setAside.created_by ?? null)
  );
}

/** The payment's live rows of `kind`: their ids and what they add up to, in cents. */
export async function liveRows(
  container: MedusaContainer,
  kind: Unsent["kind"],
  paymentId: string,
): Promise<{ ids: Set<string>; total: bigint; rows: Recorded[] }> {
  const { rows } = await knexOf(container).raw(
    `select id, amount, raw_amount, created_at, created_by from ${kind} where payment_id = ? and deleted_at is null`,
    [paymentId],
  );
  const recorded = rows as unknown as Recorded[];
  return {
    ids: new Set(recorded.map((r) => r.id)),
    total: toCentsRounded(sumExact(recorded.map(amountOf))),
    rows: recorded,
  };
}

/** The row set aside, removed for good once its redo settled. */
export async function removeSetAside(container: MedusaContainer, unsent: Unsent): Promise<void> {
  await knexOf(container).raw(`delete from ${unsent.kind} where id = ? and deleted_at is not null`, [
    unsent.row.id,
  ]);
}

/**
 * The newest rows whose sum lies above `atService` (those the service never got), oldest first,
 * when Medusa's records exceed the service's by at least the oldest one's amount (a cent of
 * rounding aside): a total that rounds a cent above the service's is no row never sent. Only the
 * oldest when they add up to more than the gap.
 */
export function unsentRows(rows: Recorded[], atService: bigint): Recorded[] {
  const ordered = [...rows].sort(
    (a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || (a.id < b.id ? -1 : 1),
  );
  const total = (list: Recorded[]) => toCentsRounded(sumExact(list.map(amountOf)));
  const gap = total(ordered) - atService;
  const unsent: Recorded[] = [];
  while (ordered.length > 0 && total(ordered) > atService) unsent.unshift(ordered.pop()!);
  const oldest = unsent[0];
  if (oldest === undefined || gap + 1n < toCentsRounded(amountOf(oldest))) return [];
  // The service holds part of them (money moved outside Medusa): only the oldest, whose redo aims
  // at the total, is set aside; setting aside one the service holds would have it sent again.
  return total(unsent) > gap + 1n ? [oldest] : unsent;
}
