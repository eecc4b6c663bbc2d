import { type EngineOptions, engineOf } from "../engine/options.js";
import { processItem } from "../engine/process-item.js";
import { registerItems } from "../engine/register.js";
import type { ChargeItem } from "../items.js";
import type { BatchItemRecord, BatchStore } from "../state/types.js";

export interface ChargeStoredTokenOptions extends Omit<EngineOptions, "store"> {
  /**
   * Where the item's record lives, required: the record (attempt, key, first-sent time) is what a
   * later call with the same `batchId` and `item` moves on. Keep one store for the life of the
   * charge (a `PostgresBatchStore`, or one `MemoryBatchStore` kept by the caller for the process).
   */
  store: BatchStore;
  /** The charge. Its `itemId` and the `batchId` make its keys: call again with both to resume it. */
  item: ChargeItem;
  /** Groups charges (e.g. "renewals-2026-12" or "draft-order-charges"); default "single". */
  batchId?: string;
}

/**
 * One merchant-initiated charge with the batch engine's guarantees: write-ahead record, a key bound
 * to batch id + item id + customer token + attempt, and the decline policy. Makes at most one call
 * and returns the item's record. Call it again with the same `store`, `batchId` and `item` to move
 * it on: `unknown` is resent with the same key (until the key's window passes: `needs_review`),
 * `retry_scheduled` becomes a new attempt once `notBefore` has passed, a final status is returned
 * as it is, without a call. For a Medusa workflow step, a draft-order action or a scheduled job.
 */
export async function chargeStoredToken(options: ChargeStoredTokenOptions): Promise<BatchItemRecord> {
  const store = options?.store;
  if (typeof store?.get !== "function" || typeof store.transition !== "function") {
    // A store made up per call forgets the attempt and the first-sent time: a second call would
    // start again at attempt 1, and once the service has forgotten the key (24 h), charge again.
    throw new TypeError(
      "chargeStoredToken needs { store }: the BatchStore that keeps the item's record between calls " +
        "(a PostgresBatchStore, or one MemoryBatchStore kept for the process); without it a call " +
        "to move the charge on would start it again and could charge twice",
    );
  }
  const batchId = options.batchId ?? "single";
  const engine = engineOf(options, store);
  await store.migrate();
  await registerItems(store, batchId, [options.item], engine.policy);
  const record = await store.get(batchId, options.item.itemId);
  if (record === undefined) throw new Error(`Batch ${batchId}: item ${options.item.itemId} was not stored`);
  const step = await processItem(engine, record);
  return step.record ?? (await store.get(batchId, options.item.itemId))!;
}
