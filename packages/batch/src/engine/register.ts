import { assertChargeItem, type ChargeItem, requestOf } from "../items.js";
import type { BatchStore, RegisterResult } from "../state/types.js";
import type { ResolvedDeclinePolicy } from "./decline-policy.js";

/** Anything that yields charge items: an array, a generator, a database cursor or stream. */
export type ChargeItemSource = Iterable<ChargeItem> | AsyncIterable<ChargeItem>;

/**
 * Stores the items of `source` in chunks (bounded memory, whatever its length). An item whose
 * order breaks a rule of the interface is stored already `rejected`, with the rule it breaks.
 */
export async function registerItems(
  store: BatchStore,
  batchId: string,
  source: ChargeItemSource,
  policy: ResolvedDeclinePolicy,
  chunkSize = 1_000,
): Promise<RegisterResult> {
  const total: RegisterResult = { added: 0, existing: 0 };
  let chunk: ChargeItem[] = [];
  let invalid = new Map<string, string>();
  let position = 0;
  const flush = async () => {
    if (chunk.length === 0) return;
    const result = await store.register(batchId, chunk, invalid);
    total.added += result.added;
    total.existing += result.existing;
    chunk = [];
    invalid = new Map();
  };
  const seen = new Set<string>();
  for await (const item of source as AsyncIterable<ChargeItem>) {
    assertChargeItem(item, position++);
    if (seen.has(item.itemId)) throw new TypeError(`item id ${item.itemId} appears twice in the input`);
    seen.add(item.itemId);
    const built = requestOf(item, policy.defaultSchedule);
    if ("invalid" in built) invalid.set(item.itemId, `INVALID_REQUEST: ${built.invalid}`);
    chunk.push(item);
    if (chunk.length >= chunkSize) await flush();
  }
  await flush();
  return total;
}
