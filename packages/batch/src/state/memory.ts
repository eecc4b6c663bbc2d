import { type ChargeItem, fingerprintOf, storedItemOf } from "../items.js";
import {
  addToCounts,
  type BatchItemRecord,
  type BatchStore,
  emptyCounts,
  type ItemChange,
  isOpen,
  type OpenItemView,
  type RegisterResult,
  type StatusCounts,
} from "./types.js";

interface MemoryBatch {
  /** In registration order: an item's seq is its index. */
  records: BatchItemRecord[];
  byId: Map<string, { record: BatchItemRecord; fingerprint: string }>;
}

/**
 * Batch state in this process's memory: the embedded default. Nothing survives the process, so a
 * run cannot be resumed after a crash; use `PostgresBatchStore` for that.
 */
export class MemoryBatchStore implements BatchStore {
  readonly #batches = new Map<string, MemoryBatch>();

  async migrate(): Promise<void> {}

  async register(
    batchId: string,
    items: ReadonlyArray<ChargeItem>,
    invalid: ReadonlyMap<string, string> = new Map(),
  ): Promise<RegisterResult> {
    const batch = this.#batch(batchId);
    const result: RegisterResult = { added: 0, existing: 0 };
    for (const given of items) {
      const item = storedItemOf(given);
      const fingerprint = fingerprintOf(item);
      const known = batch.byId.get(item.itemId);
      if (known) {
        if (known.fingerprint !== fingerprint) throw conflict(batchId, item.itemId);
        result.existing++;
        continue;
      }
      const reason = invalid.get(item.itemId);
      const record: BatchItemRecord = {
        batchId,
        itemId: item.itemId,
        seq: batch.records.length,
        item: structuredClone(item),
        status: reason === undefined ? "pending" : "rejected",
        attempt: 0,
        ...(reason === undefined ? {} : { reason }),
        log: [],
        version: 0,
        updatedAt: new Date(),
      };
      batch.records.push(record);
      batch.byId.set(item.itemId, { record, fingerprint });
      result.added++;
    }
    return result;
  }

  async get(batchId: string, itemId: string): Promise<BatchItemRecord | undefined> {
    const found = this.#batches.get(batchId)?.byId.get(itemId)?.record;
    return found === undefined ? undefined : copy(found);
  }

  async transition(
    record: BatchItemRecord,
    change: ItemChange,
    now: Date,
  ): Promise<BatchItemRecord | undefined> {
    const entry = this.#batches.get(record.batchId)?.byId.get(record.itemId);
    if (!entry || entry.record.version !== record.version) return undefined;
    const next = applyChange(entry.record, change, now);
    entry.record = next;
    this.#batches.get(record.batchId)!.records[next.seq] = next;
    return copy(next);
  }

  async due(batchId: string, now: Date, afterSeq: number, limit: number): Promise<BatchItemRecord[]> {
    const records = this.#batches.get(batchId)?.records ?? [];
    const found: BatchItemRecord[] = [];
    for (let seq = Math.max(0, afterSeq + 1); seq < records.length && found.length < limit; seq++) {
      const record = records[seq]!;
      if (isOpen(record.status) && (record.notBefore === undefined || record.notBefore <= now)) {
        found.push(copy(record));
      }
    }
    return found;
  }

  async open(batchId: string, limit: number): Promise<OpenItemView[]> {
    const views: OpenItemView[] = [];
    for (const record of this.#batches.get(batchId)?.records ?? []) {
      if (!isOpen(record.status)) continue;
      views.push({
        itemId: record.itemId,
        status: record.status,
        ...(record.notBefore === undefined ? {} : { notBefore: record.notBefore }),
      });
    }
    // The soonest due first (stable: seq order among equals), as the Postgres store.
    const due = (view: OpenItemView) => view.notBefore?.getTime() ?? Number.NEGATIVE_INFINITY;
    return views.sort((a, b) => (due(a) === due(b) ? 0 : due(a) < due(b) ? -1 : 1)).slice(0, limit);
  }

  async counts(batchId: string): Promise<StatusCounts> {
    const counts = emptyCounts();
    for (const record of this.#batches.get(batchId)?.records ?? []) {
      addToCounts(counts, record.status, record.reason);
    }
    return counts;
  }

  async *items(batchId: string): AsyncIterable<BatchItemRecord> {
    for (const record of this.#batches.get(batchId)?.records ?? []) yield copy(record);
  }

  #batch(batchId: string): MemoryBatch {
    let batch = this.#batches.get(batchId);
    if (!batch) {
      batch = { records: [], byId: new Map() };
      this.#batches.set(batchId, batch);
    }
    return batch;
  }
}

export function conflict(batchId: string, itemId: string): Error {
  return new Error(
    `Batch ${batchId}: item ${itemId} was registered before with another customer token or order; one item id is one charge`,
  );
}

/** The record after `change` (a new object; `log` appended). */
export function applyChange(record: BatchItemRecord, change: ItemChange, now: Date): BatchItemRecord {
  const next: BatchItemRecord = {
    ...record,
    status: change.status,
    version: record.version + 1,
    updatedAt: now,
  };
  if (change.attempt !== undefined) next.attempt = change.attempt;
  setOrClear(next, "idempotencyKey", change.idempotencyKey);
  setOrClear(next, "request", change.request);
  setOrClear(next, "firstSentAt", change.firstSentAt);
  setOrClear(next, "notBefore", change.notBefore);
  setOrClear(next, "reason", change.reason);
  setOrClear(next, "result", change.result);
  if (change.appendLog) next.log = [...record.log, change.appendLog];
  return next;
}

function setOrClear<
  K extends "idempotencyKey" | "request" | "firstSentAt" | "notBefore" | "reason" | "result",
>(record: BatchItemRecord, key: K, value: BatchItemRecord[K] | null | undefined): void {
  if (value === undefined) return;
  if (value === null) delete record[key];
  else record[key] = value as BatchItemRecord[K];
}

function copy(record: BatchItemRecord): BatchItemRecord {
  return { ...record, log: [...record.log] };
}
