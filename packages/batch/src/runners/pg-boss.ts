import { setTimeout as sleep } from "node:timers/promises";
import { type EngineOptions, engineOf, nonNegative } from "../engine/options.js";
import { type Engine, processItem } from "../engine/process-item.js";
import { type ChargeItemSource, registerItems } from "../engine/register.js";
import type { BatchStore } from "../state/types.js";
import { type BatchSummary, summaryOf } from "../summary.js";
import { rateLimiter } from "./rate-limiter.js";

// Scale-out on pg-boss, on the PostgreSQL the store already uses: one job per item, any number of
// workers in any number of processes. pg-boss hands each job to one worker at a time and hands it
// out again when a worker dies (after `expireInSeconds`); the item's write-ahead record and its
// derived key make a job that runs twice harmless (same key: the service answers the first outcome).

/** The part of a started `PgBoss` instance (pg-boss 10 or later) this module uses. */
export interface PgBossLike {
  createQueue(
    name: string,
    options?: {
      name: string;
      retryLimit?: number;
      retryDelay?: number;
      retryBackoff?: boolean;
      expireInSeconds?: number;
    },
  ): Promise<unknown>;
  insert(jobs: Array<{ name: string; data?: object; startAfter?: Date | string }>): Promise<unknown>;
  send(name: string, data: object, options?: { startAfter?: Date | string | number }): Promise<string | null>;
  work(
    name: string,
    options: { batchSize?: number; pollingIntervalSeconds?: number },
    handler: (jobs: Array<{ id: string; data: unknown }>) => Promise<unknown>,
  ): Promise<string>;
  offWork(name: string): Promise<unknown>;
}

export interface BatchJobData {
  batchId: string;
  itemId: string;
  /** Resends of an unknown outcome so far, through this queue. */
  resends?: number;
}

export interface PgBossBatchQueueOptions extends EngineOptions {
  /** A started PgBoss instance (the caller owns it: starts and stops it). */
  boss: PgBossLike;
  /** The store every worker shares: a `PostgresBatchStore` (the same database as pg-boss, or not). */
  store: BatchStore;
  /** pg-boss queue name; default "purchase-auth-batch". */
  queue?: string;
  /** Resends of one unknown outcome through the queue before leaving it to `resume`; default 10. */
  maxUnknownResends?: number;
  /** A job not finished within this many seconds is handed to another worker; default 300. */
  expireInSeconds?: number;
}

export interface WorkOptions {
  /** Jobs this worker processes at once; default 8. */
  concurrency?: number;
  /** Requests this worker starts per second at most; default unlimited. */
  ratePerSecond?: number;
  /** How often an idle worker polls; default 0.5 s (pg-boss's minimum). */
  pollingIntervalSeconds?: number;
}

/**
 * A batch queue on pg-boss. Producers `enqueue` (register items + one job each); workers `work`;
 * anyone can `summary` or `waitFor` a batch. Every worker must use the same store and keyNamespace.
 */
export class PgBossBatchQueue {
  readonly #boss: PgBossLike;
  readonly #store: BatchStore;
  readonly #options: PgBossBatchQueueOptions;
  readonly #queue: string;
  readonly #maxUnknownResends: number;
  readonly #expireInSeconds: number;
  #ready: Promise<void> | undefined;

  constructor(options: PgBossBatchQueueOptions) {
    if (typeof options?.boss?.work !== "function")
      throw new TypeError("boss must be a started PgBoss instance");
    if (typeof options.store?.transition !== "function") throw new TypeError("store must be a BatchStore");
    this.#boss = options.boss;
    this.#store = options.store;
    this.#options = options;
    this.#queue = options.queue ?? "purchase-auth-batch";
    this.#maxUnknownResends = nonNegative(options.maxUnknownResends, 10, "maxUnknownResends");
    this.#expireInSeconds = nonNegative(options.expireInSeconds, 300, "expireInSeconds");
    engineOf(options, options.store); // checks the options now, not in the first job
  }

  get queue(): string {
    return this.#queue;
  }

  /** Creates the store's table and the queue (idempotent). */
  setup(): Promise<void> {
    this.#ready ??= (async () => {
      await this.#store.migrate();
      // A job that fails (a database error, a fatal configuration error) is retried by pg-boss.
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
   * Queues a job for every open item of the batch (after a crash of everything, or for items left
   * unknown or scheduled): harmless when jobs for them are still queued.
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

  /** Starts a worker in this process; returns a function that stops it (jobs in hand finish). */
  async work(options: WorkOptions = {}): Promise<() => Promise<void>> {
    await this.setup();
    const concurrency = Math.max(1, Math.floor(nonNegative(options.concurrency, 8, "concurrency")));
    const engine = engineOf(
      this.#options,
      this.#store,
      rateLimiter(options.ratePerSecond, this.#options.signal),
    );
    await this.#boss.work(
      this.#queue,
      { batchSize: concurrency, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 0.5 },
      async (jobs) => {
        // A throw fails the whole fetched batch of jobs; pg-boss retries them (harmless, same keys).
        await Promise.all(jobs.map((job) => this.#run(engine, job.data as BatchJobData)));
      },
    );
    return async () => {
      await this.#boss.offWork(this.#queue);
    };
  }

  async summary(batchId: string): Promise<BatchSummary> {
    return summaryOf(batchId, await this.#store.counts(batchId));
  }

  /**
   * Resolves when no item of the batch is due within `waitUpToMs` (every item final, or left for
   * later), polling the store every `pollMs` (default 500).
   */
  async waitFor(
    batchId: string,
    options: { pollMs?: number; waitUpToMs?: number; signal?: AbortSignal } = {},
  ) {
    const pollMs = options.pollMs ?? 500;
    const horizon = options.waitUpToMs ?? 60_000;
    for (;;) {
      const open = await this.#store.open(batchId, 10_000);
      const now = Date.now();
      const soon = open.filter(
        (item) => (item.notBefore?.getTime() ?? now) - now <= horizon && !this.#given(item.itemId),
      );
      if (soon.length === 0) return this.summary(batchId);
      await sleep(pollMs, undefined, options.signal ? { signal: options.signal } : undefined);
    }
  }

  /** Items whose unknown outcome this process stopped resending (left to `resume`). */
  readonly #givenUp = new Set<string>();
  #given(itemId: string): boolean {
    return this.#givenUp.has(itemId);
  }

  async #run(engine: Engine, data: BatchJobData): Promise<void> {
    const record = await this.#store.get(data.batchId, data.itemId);
    if (record === undefined) return;
    const step = await processItem(engine, record);
    const after = step.record;
    if (after === undefined) return; // another worker moved it on; its job carries on from there
    if (after.status === "pending" || after.status === "retry_scheduled" || after.status === "unknown") {
      const resends = (data.resends ?? 0) + (after.status === "unknown" ? 1 : 0);
      if (resends > this.#maxUnknownResends) {
        this.#givenUp.add(data.itemId);
        return;
      }
      // The follow-up job: if this worker dies before it is queued, pg-boss re-runs this one.
      await this.#boss.send(
        this.#queue,
        { batchId: data.batchId, itemId: data.itemId, resends } satisfies BatchJobData,
        after.notBefore === undefined ? {} : { startAfter: after.notBefore },
      );
    }
  }
}
