import { setTimeout as sleep } from "node:timers/promises";
import { BatchFatalError } from "../engine/classify.js";
import { type EngineOptions, engineOf, nonNegative } from "../engine/options.js";
import { processItem } from "../engine/process-item.js";
import { type ChargeItemSource, registerItems } from "../engine/register.js";
import { MemoryBatchStore } from "../state/memory.js";
import { addToCounts, type BatchItemRecord, type StatusCounts } from "../state/types.js";
import { type BatchSummary, summaryOf } from "../summary.js";
import { rateLimiter } from "./rate-limiter.js";

export interface BatchProgress {
  batchId: string;
  /** Items of the batch, and how many are in each status now. */
  counts: StatusCounts;
  /** Requests sent by this run so far. */
  sent: number;
  /** Items that reached a final status in this run. */
  finished: number;
  elapsedMs: number;
  /** Requests per second in this run. */
  sentPerSecond: number;
}

export interface RunBatchOptions extends EngineOptions {
  /** Identifies the batch: the same id resumes it (items, attempts and keys are bound to it). */
  batchId: string;
  /** The charges; omitted = resume what the store already holds for `batchId`. */
  items?: ChargeItemSource;
  /** Requests in flight at once; default 8. */
  concurrency?: number;
  /** Requests started per second at most (sends and resends); default unlimited. */
  ratePerSecond?: number;
  /**
   * How long the run waits for items due later (a scheduled decline retry, a resend of an unknown
   * outcome) before it ends and leaves them for a resume; default 60,000 ms.
   */
  waitUpToMs?: number;
  /** Resends of one unknown outcome in this run before leaving it to a resume; default 10. */
  maxUnknownResends?: number;
  /** Called about every `progressIntervalMs` (default 1,000) and once at the end. */
  onProgress?: (progress: BatchProgress) => void;
  progressIntervalMs?: number;
  /** Called after each step that changed an item (holds the customer token: never log `item`). */
  onItem?: (record: BatchItemRecord) => void;
}

export interface RunBatchResult extends BatchSummary {
  /** Requests sent by this run. */
  sent: number;
  elapsedMs: number;
}

/**
 * Runs a batch of merchant-initiated charges in this process: registers the items (idempotently),
 * then works every open item with bounded concurrency and rate until each is final or left for a
 * later resume. Safe to run again with the same `batchId` after a crash (with a PostgreSQL store):
 * nobody is charged twice, nobody is lost.
 */
export async function runBatch(options: RunBatchOptions): Promise<RunBatchResult> {
  const started = performance.now();
  const store = options.store ?? new MemoryBatchStore();
  const concurrency = Math.floor(nonNegative(options.concurrency, 8, "concurrency"));
  if (concurrency < 1) throw new TypeError("concurrency must be at least 1");
  if (typeof options.batchId !== "string" || options.batchId.length === 0 || options.batchId.length > 200) {
    throw new TypeError("batchId must be a string of 1 to 200 characters");
  }
  const waitUpToMs = nonNegative(options.waitUpToMs, 60_000, "waitUpToMs");
  const maxUnknownResends = nonNegative(options.maxUnknownResends, 10, "maxUnknownResends");
  const progressIntervalMs = nonNegative(options.progressIntervalMs, 1_000, "progressIntervalMs");
  const engine = engineOf(options, store, rateLimiter(options.ratePerSecond, options.signal));
  const { batchId } = options;

  await store.migrate();
  if (options.items !== undefined) await registerItems(store, batchId, options.items, engine.policy);

  const counts = await store.counts(batchId);
  let sent = 0;
  let finished = 0;
  let lastProgress = 0;
  const progress = (force = false) => {
    if (!options.onProgress) return;
    const now = performance.now();
    if (!force && now - lastProgress < progressIntervalMs) return;
    lastProgress = now;
    const elapsedMs = now - started;
    options.onProgress({
      batchId,
      counts: structuredClone(counts),
      sent,
      finished,
      elapsedMs,
      sentPerSecond: elapsedMs > 0 ? (sent * 1000) / elapsedMs : 0,
    });
  };
  progress(true);

  /** Unknown outcomes resent in this run, per item: past the limit they are left to a resume. */
  const unknownResends = new Map<string, number>();
  const leftAlone = new Set<string>();

  const work = async (record: BatchItemRecord) => {
    if (record.status === "unknown" || record.status === "sending") {
      const resends = (unknownResends.get(record.itemId) ?? 0) + 1;
      if (resends > maxUnknownResends) {
        leftAlone.add(record.itemId);
        return;
      }
      unknownResends.set(record.itemId, resends);
    }
    let step: Awaited<ReturnType<typeof processItem>>;
    try {
      step = await processItem(engine, record);
    } catch (error) {
      // Aborted while the rate limiter held it back, before anything was written ahead or sent:
      // not sent. The item stays as it was, for a resume, and the run ends with its report.
      if (options.signal?.aborted && isAbort(error)) return;
      throw error;
    }
    if (step.sent) sent++;
    const after = step.record;
    if (after === undefined || after.version === record.version) return;
    addToCounts(counts, record.status, record.reason, -1);
    addToCounts(counts, after.status, after.reason, 1);
    if (!["pending", "sending", "unknown", "retry_scheduled"].includes(after.status)) finished++;
    options.onItem?.(after);
    progress();
  };

  /** One pass over the items due now, in registration order, `concurrency` at a time. */
  const pass = async () => {
    const inFlight = new Set<Promise<void>>();
    let failure: unknown;
    let cursor = -1;
    const pageSize = Math.max(100, concurrency * 4);
    while (failure === undefined && !options.signal?.aborted) {
      const page = await store.due(batchId, engine.now(), cursor, pageSize);
      if (page.length === 0) break;
      for (const record of page) {
        cursor = record.seq;
        if (leftAlone.has(record.itemId)) continue;
        while (inFlight.size >= concurrency) await Promise.race(inFlight);
        if (failure !== undefined || options.signal?.aborted) break;
        const task: Promise<void> = work(record)
          .catch((error: unknown) => {
            failure ??= error;
          })
          .finally(() => inFlight.delete(task));
        inFlight.add(task);
      }
    }
    await Promise.all(inFlight);
    if (failure !== undefined) throw failure;
  };

  try {
    for (;;) {
      await pass();
      if (options.signal?.aborted) break;
      // Wait for items due soon (decline retries, resends of unknown outcomes); leave the rest.
      const open = (await store.open(batchId, 10_000)).filter((item) => !leftAlone.has(item.itemId));
      if (open.length === 0) break;
      const now = engine.now().getTime();
      const nextDue = Math.min(...open.map((item) => item.notBefore?.getTime() ?? now));
      if (nextDue - now > waitUpToMs) break;
      if (nextDue > now)
        await sleep(nextDue - now, undefined, options.signal ? { signal: options.signal } : undefined).catch(
          () => {},
        );
    }
  } catch (error) {
    if (error instanceof BatchFatalError) progress(true);
    throw error;
  }

  progress(true);
  const elapsedMs = performance.now() - started;
  return { ...summaryOf(batchId, await store.counts(batchId)), sent, elapsedMs };
}

/** The rejection of an aborted wait (node's timers: an AbortError). */
function isAbort(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}
