import { setTimeout as sleep } from "node:timers/promises";
import { BatchFatalError } from "../engine/classify.js";
import { engineOf, nonNegative } from "../engine/options.js";
import { type Engine, processItem } from "../engine/process-item.js";
import { type ChargeItemSource, registerItems } from "../engine/register.js";
import { MemoryBatchStore } from "../state/memory.js";
import { type BatchStore, isOpen } from "../state/types.js";
import { type BatchSummary, summaryOf } from "../summary.js";
import { type FollowUpPolicy, failureDelayMs, followUpDelayMs } from "./pg-boss-schedule.js";
import type {
  BatchJobData,
  PgBossBatchQueueOptions,
  PgBossJob,
  PgBossLike,
  WorkOptions,
} from "./pg-boss-types.js";
import { type JobContext, type JobOutcome, startWorkerLoop } from "./pg-boss-worker.js";
import { type RateLimiter, RateLimitWaitAbortedError, rateLimiter } from "./rate-limiter.js";

// Scale-out on pg-boss, on the PostgreSQL the store already uses: one job per item, any number of
// workers in any number of processes. pg-boss hands each job to one worker at a time and hands it
// out again when a worker dies (after `expireInSeconds`); the item's write-ahead record and its
// derived key make a job that runs twice harmless (same key: the service answers the first outcome).
//
// Each job of an open item ends by queuing the item's next job (its "follow-up"), and only then
// completes: an open item always has a job, in this process or not, until it is final. The chain
// is never dropped by a worker: an unknown outcome is resent at growing delays until it is answered
// or the key's window has passed (then the engine marks the item `needs_review`, which is final).

export type { BatchJobData, PgBossBatchQueueOptions, PgBossLike, WorkOptions } from "./pg-boss-types.js";

/** A job whose item is not in this worker's store (another database or schema, or a deleted batch). */
class MissingItemError extends Error {
  constructor(data: BatchJobData) {
    super(
      `pg-boss job for batch ${String(data?.batchId)}, item ${String(data?.itemId)}: no such item in this worker's store (is it the producer's database and schema?)`,
    );
    this.name = "MissingItemError";
  }
}

/** A job whose data is not a batch item's (a producer's bug, or a job made by hand). */
class MalformedJobError extends Error {
  constructor(data: unknown) {
    super(
      `pg-boss job with data ${JSON.stringify(data) ?? String(data)}: not a batch item's job ({ batchId, itemId } strings)`,
    );
    this.name = "MalformedJobError";
  }
}

function isJobData(data: unknown): data is BatchJobData {
  const fields = data as Partial<BatchJobData> | null;
  return (
    typeof fields === "object" &&
    fields !== null &&
    typeof fields.batchId === "string" &&
    typeof fields.itemId === "string"
  );
}

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A batch queue on pg-boss. Producers `enqueue` (register items + one job each); workers `work`;
 * anyone can `summary` or `waitFor` a batch. Every worker must use the same store and keyNamespace.
 */
export class PgBossBatchQueue {
  readonly #boss: PgBossLike;
  readonly #store: BatchStore;
  readonly #options: PgBossBatchQueueOptions;
  readonly #queue: string;
  readonly #schema: string;
  readonly #expireInSeconds: number;
  readonly #followUp: FollowUpPolicy;
  #ready: Promise<void> | undefined;

  constructor(options: PgBossBatchQueueOptions) {
    if (typeof options?.boss?.work !== "function")
      throw new TypeError("boss must be a started PgBoss instance");
    if (typeof options.store?.transition !== "function") throw new TypeError("store must be a BatchStore");
    if (options.store instanceof MemoryBatchStore) {
      throw new TypeError(
        "PgBossBatchQueue needs a store every worker shares (a PostgresBatchStore), not a MemoryBatchStore",
      );
    }
    this.#boss = options.boss;
    this.#store = options.store;
    this.#options = options;
    this.#queue = options.queue ?? "purchase-auth-batch";
    this.#schema = options.bossSchema ?? "pgboss";
    if (!SCHEMA_NAME.test(this.#schema)) throw new TypeError("bossSchema must be a plain SQL name");
    this.#expireInSeconds = nonNegative(options.expireInSeconds, 300, "expireInSeconds");
    const engine = engineOf(options, options.store); // checks the options now, not in the first job
    this.#followUp = {
      unknownRetryDelayMs: engine.unknownRetryDelayMs,
      maxUnknownResends: nonNegative(options.maxUnknownResends, 10, "maxUnknownResends"),
      maxUnknownResendDelayMs: nonNegative(
        options.maxUnknownResendDelayMs,
        300_000,
        "maxUnknownResendDelayMs",
      ),
      idempotencyWindowMs: nonNegative(options.idempotencyWindowMs, 3_600_000, "idempotencyWindowMs"),
      idempotencySafetyMarginMs: nonNegative(
        options.idempotencySafetyMarginMs,
        300_000,
        "idempotencySafetyMarginMs",
      ),
    };
  }

  get queue(): string {
    return this.#queue;
  }

  /** Creates the store's table and the queue (idempotent). */
  setup(): Promise<void> {
    this.#ready ??= (async () => {
      await this.#store.migrate();
      // pg-boss retries a job only when its worker could not put the item back itself: the worker
      // died, the job expired, or the database refused the follow-up job. Every other failure is
      // handled by the worker (see `#handle`). An existing queue keeps the options it was created with.
      await this.#boss.createQueue(this.#queue, {
        name: this.#queue,
        retryLimit: 5,
        retryDelay: 5,
        retryBackoff: true,
        expireInSeconds: this.#expireInSeconds,
      });
    })();
    return this.#ready;
  }

  /** Registers the items (idempotent) and queues a job for every open item of the batch. */
  async enqueue(batchId: string, items?: ChargeItemSource): Promise<{ queued: number }> {
    await this.setup();
    if (items !== undefined) {
      await registerItems(this.#store, batchId, items, engineOf(this.#options, this.#store).policy);
    }
    return this.resume(batchId);
  }

  /**
   * Queues a job for every open item of the batch (after a crash of everything, or for items whose
   * job pg-boss gave up on): harmless when jobs for them are still queued.
   */
  async resume(batchId: string): Promise<{ queued: number }> {
    await this.setup();
    let queued = 0;
    let cursor = -1;
    const far = new Date(8.64e15);
    for (;;) {
      const page = await this.#store.due(batchId, far, cursor, 1_000);
      if (page.length === 0) break;
      cursor = page[page.length - 1]!.seq;
      await this.#boss.insert(
        page.map((record) => ({
          name: this.#queue,
          data: { batchId, itemId: record.itemId } satisfies BatchJobData,
          ...(record.notBefore === undefined ? {} : { startAfter: record.notBefore }),
        })),
      );
      queued += page.length;
    }
    return { queued };
  }

  /**
   * Starts a worker in this process; resolves to a function that stops it gracefully.
   *
   * Each fetched job is handled on its own: one job's failure never fails the others (pg-boss fails
   * every job of a fetched batch when its handler throws). A passing failure (a database error)
   * puts the item back with a delayed job; a fatal one (`BatchFatalError`: credentials refused)
   * puts it back too and pauses this worker (`fatalPauseMs`), as a pg-boss worker would wait out an
   * outage, instead of burning every job's retries. A job's call is aborted (its item stays unknown,
   * resent by the follow-up job) before the job's `expireInSeconds`, so pg-boss never hands out a
   * job whose first run is still going; so is its wait for `ratePerSecond` (the item is put back
   * untouched).
   *
   * The stop function stops fetching and resolves only when every job this worker started has
   * finished: calls in flight are answered and stored, and their items' next jobs queued. Jobs
   * still waiting for `ratePerSecond` are put back untouched instead of being started, and jobs
   * pg-boss fetched while it stopped are left to pg-boss's retry. Once it has resolved, the store's
   * pool and pg-boss may be closed.
   */
  async work(options: WorkOptions = {}): Promise<() => Promise<void>> {
    await this.setup();
    const concurrency = Math.max(1, Math.floor(nonNegative(options.concurrency, 8, "concurrency")));
    const basePauseMs = nonNegative(options.fatalPauseMs, 10_000, "fatalPauseMs");
    const onError = options.onError ?? reportToStderr;
    const engine = engineOf(this.#options, this.#store);
    const stopping = new AbortController(); // aborted by the stop function
    // Shared by the worker's jobs; a stop ends every wait in it, a job's deadline its own.
    const limit = rateLimiter(options.ratePerSecond, stopping.signal);
    // onError is the caller's: should it throw, the job's fate stays the same, said on stderr.
    const report = (error: unknown, data: BatchJobData) => {
      const job = { batchId: String(data?.batchId), itemId: String(data?.itemId) };
      try {
        onError(asError(error), job);
      } catch {
        reportToStderr(asError(error), job);
      }
    };

    return startWorkerLoop({
      boss: this.#boss,
      queue: this.#queue,
      stopping,
      fetch: { batchSize: concurrency, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 0.5 },
      basePauseMs,
      handleJob: (job, context) => this.#handle({ engine, limit, job, context, report }),
      onRestartError: (error) => report(error, { batchId: "", itemId: "" }),
    });
  }

  async summary(batchId: string): Promise<BatchSummary> {
    return summaryOf(batchId, await this.#store.counts(batchId));
  }

  /**
   * Resolves when no item of the batch is due within `waitUpToMs` (every item final, or left for
   * later), polling the store every `pollMs` (default 500). An open item that has had no pg-boss
   * job (queued, retrying or running) for `strandedAfterMs` (default 10 s) is not waited for: no
   * worker will move it until `resume(batchId)` queues it again. Works in any process: it reads the
   * store and pg-boss's job table.
   */
  async waitFor(
    batchId: string,
    options: { pollMs?: number; waitUpToMs?: number; strandedAfterMs?: number; signal?: AbortSignal } = {},
  ) {
    const pollMs = options.pollMs ?? 500;
    const horizon = options.waitUpToMs ?? 60_000;
    const strandedAfterMs = options.strandedAfterMs ?? 10_000;
    const jobless = new Map<string, number>(); // item id → since when it has had no job
    for (;;) {
      const open = await this.#store.open(batchId, 10_000);
      const now = Date.now();
      let waiting = open.filter((item) => (item.notBefore?.getTime() ?? now) - now <= horizon);
      const withJob = waiting.length === 0 ? undefined : await this.#itemsWithJob(batchId, waiting);
      if (withJob !== undefined) {
        const seen = new Set<string>();
        waiting = waiting.filter((item) => {
          if (withJob.has(item.itemId)) return true;
          seen.add(item.itemId);
          const since = jobless.get(item.itemId) ?? now;
          jobless.set(item.itemId, since);
          return now - since < strandedAfterMs;
        });
        for (const itemId of jobless.keys()) if (!seen.has(itemId)) jobless.delete(itemId);
      }
      if (waiting.length === 0) return this.summary(batchId);
      await sleep(pollMs, undefined, options.signal ? { signal: options.signal } : undefined);
    }
  }

  /** Which of these items have a job that is queued, waiting for a retry or running. */
  async #itemsWithJob(
    batchId: string,
    items: ReadonlyArray<{ itemId: string }>,
  ): Promise<Set<string> | undefined> {
    const db = this.#boss.getDb?.();
    if (db === undefined) return undefined;
    const { rows } = await db.executeSql(
      `SELECT DISTINCT data->>'itemId' AS item_id FROM ${this.#schema}.job
       WHERE name = $1 AND state < 'completed' AND data->>'batchId' = $2 AND data->>'itemId' = ANY($3::text[])`,
      [this.#queue, batchId, items.map((item) => item.itemId)],
    );
    return new Set(rows.map((row) => String(row.item_id)));
  }

  /** Runs one job; never throws: whatever happens, the item is put back or pg-boss retries the job. */
  async #handle({ engine, limit, job, context, report }: JobRun): Promise<JobOutcome> {
    const data = job.data as BatchJobData;
    if (!isJobData(data)) {
      // Loud, as a missing item: failed (after pg-boss's retries) for a person to see.
      report(new MalformedJobError(data), data);
      await this.#boss.fail(this.#queue, job.id, { message: "not a batch item's job" }).catch(() => {});
      return "failed";
    }
    // Aborts the job's call (its item stays unknown and is resent by the follow-up) before pg-boss
    // would consider the job expired and hand it to another worker.
    const expireMs = Math.max(1, job.expireInSeconds ?? this.#expireInSeconds) * 1_000;
    const deadline = AbortSignal.timeout(expireMs - Math.min(expireMs * 0.2, 10_000));
    const signal = engine.signal === undefined ? deadline : AbortSignal.any([engine.signal, deadline]);
    // The wait for a start slot ends at the same deadline (and when the worker stops): a job that
    // has not started by then is put back as it was, rather than started past its expiry.
    try {
      await this.#run({ ...engine, signal, beforeSend: () => limit(signal) }, data);
      return "done";
    } catch (error) {
      if (error instanceof RateLimitWaitAbortedError && context.stopping.aborted) {
        // Not started (nothing written ahead or sent) and the worker is stopping: not an error.
        // The same job again, at once, for the next worker.
        return (await this.#putBack(job, data, 0, error)) ? "failed" : "lost";
      }
      report(heldBackPastDeadline(error, deadline) ?? error, data);
      if (error instanceof MissingItemError) {
        // Loud, not silent: the job stays in pg-boss (retried, then failed), for a worker on the
        // right store or for a person to see.
        await this.#boss.fail(this.#queue, job.id, { message: error.message }).catch(() => {});
        return "failed";
      }
      const fatal = error instanceof BatchFatalError;
      const failures = (data.failures ?? 0) + 1;
      const delayMs = fatal ? Math.max(context.pauseMs, 1_000) : failureDelayMs(failures);
      const put = await this.#putBack(job, { ...data, resends: data.resends ?? 0, failures }, delayMs, error);
      if (!put) return "lost";
      return fatal ? "fatal" : "failed";
    }
  }

  /**
   * Queues the item's job again after `delayMs`. If that fails, pg-boss retries this job (and only
   * this one); false when even that failed (the worker's handler then throws, see pg-boss-worker.ts).
   */
  async #putBack(job: PgBossJob, data: BatchJobData, delayMs: number, error: unknown): Promise<boolean> {
    try {
      const { batchId, itemId, resends, failures } = data;
      await this.#boss.send(
        this.#queue,
        { batchId, itemId, resends, failures } satisfies BatchJobData,
        delayMs > 0 ? { startAfter: delayMs / 1_000 } : {},
      );
      return true;
    } catch {
      try {
        await this.#boss.fail(this.#queue, job.id, { message: asError(error).message });
        return true;
      } catch {
        return false;
      }
    }
  }

  async #run(engine: Engine, data: BatchJobData): Promise<void> {
    const record = await this.#store.get(data.batchId, data.itemId);
    if (record === undefined) throw new MissingItemError(data);
    if (!isOpen(record.status)) return; // final: the chain ends
    const step = await processItem(engine, record);
    const after = step.record;
    if (after === undefined) return; // another worker moved it on; its job carries on from there
    if (after.status !== "pending" && after.status !== "retry_scheduled" && after.status !== "unknown")
      return;
    // A resend: a call was made (its outcome was logged; not processItem returning early because
    // the item is not due yet by this worker's clock) about a key that may have been sent before.
    const called = step.sent || after.log.length > record.log.length;
    const resent =
      called && after.status === "unknown" && (record.status === "unknown" || record.status === "sending");
    const resends = (data.resends ?? 0) + (resent ? 1 : 0);
    const delayMs = followUpDelayMs(after, resends, resent, engine.now(), this.#followUp);
    // The follow-up job: if this worker dies before it is queued, pg-boss re-runs this one.
    await this.#boss.send(
      this.#queue,
      { batchId: data.batchId, itemId: data.itemId, resends } satisfies BatchJobData,
      delayMs > 0 ? { startAfter: delayMs / 1_000 } : {},
    );
  }
}

/** What `#handle` needs to run one job of a worker. */
interface JobRun {
  engine: Engine;
  /** The worker's rate limiter; each job waits in it with its own deadline. */
  limit: RateLimiter;
  job: PgBossJob;
  context: JobContext;
  report: (error: unknown, data: BatchJobData) => void;
}

/**
 * The error to report when a job's wait for `ratePerSecond` outlasted its deadline: it says what
 * happened and what to change, where an AbortError would only confuse.
 */
function heldBackPastDeadline(error: unknown, deadline: AbortSignal): Error | undefined {
  if (!(error instanceof RateLimitWaitAbortedError) || !deadline.aborted) return undefined;
  return new Error(
    "not sent: held back by ratePerSecond until the job's deadline (shortly before expireInSeconds); " +
      "the item is put back untouched. Lower concurrency, or raise ratePerSecond or expireInSeconds",
    { cause: error },
  );
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function reportToStderr(error: Error, job: { batchId: string; itemId: string }): void {
  console.error(
    `[@purchase-auth/batch] pg-boss job (batch ${job.batchId}, item ${job.itemId}): ${error.message}`,
  );
}
