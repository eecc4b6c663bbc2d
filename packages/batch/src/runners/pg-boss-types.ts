import type { EngineOptions } from "../engine/options.js";
import type { BatchStore } from "../state/types.js";

// The public shapes of the pg-boss runner (pg-boss.ts): what it needs of pg-boss, a job's data,
// and the options of the queue and of a worker.

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
    handler: (jobs: PgBossJob[]) => Promise<unknown>,
  ): Promise<string>;
  /** Stops a worker's fetching; pg-boss 10 does not wait for its handler (`work`'s stop does). */
  offWork(value: string | { id: string }): Promise<unknown>;
  /** Fails one job (pg-boss retries it per the queue's retry options). */
  fail(name: string, id: string, data?: object): Promise<unknown>;
  /** pg-boss's database (`waitFor` reads which items still have a job); optional for look-alikes. */
  getDb?(): {
    executeSql(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  };
}

/** A job as pg-boss hands it to a worker's handler. */
export interface PgBossJob {
  id: string;
  data: unknown;
  expireInSeconds?: number;
}

export interface BatchJobData {
  batchId: string;
  itemId: string;
  /** Resends of an unknown outcome so far, through this queue. */
  resends?: number;
  /** Runs in a row that failed for a passing reason (a database error), for their backoff. */
  failures?: number;
}

export interface PgBossBatchQueueOptions extends EngineOptions {
  /** A started PgBoss instance (the caller owns it: starts and stops it). */
  boss: PgBossLike;
  /**
   * The store every worker shares: a `PostgresBatchStore` (the same database as pg-boss, or not).
   * A `MemoryBatchStore` is refused: a job run by another process would not find its item.
   */
  store: BatchStore;
  /** pg-boss queue name; default "purchase-auth-batch". */
  queue?: string;
  /** pg-boss's schema (its `schema` option), for `waitFor`; default "pgboss". */
  bossSchema?: string;
  /**
   * Resends of one unknown outcome at `unknownRetryDelayMs` before the delay starts doubling (up to
   * `maxUnknownResendDelayMs`); default 10. Resends go on until the outcome is known or the key's
   * window has passed (then the item becomes `needs_review`).
   */
  maxUnknownResends?: number;
  /** The longest delay between two resends of an unknown outcome; default 300,000 ms. */
  maxUnknownResendDelayMs?: number;
  /** The client's `idempotencyWindowMs` (default core's: 3,600,000), if you changed it. */
  idempotencyWindowMs?: number;
  /** The client's `idempotencySafetyMarginMs` (default core's: 300,000), if you changed it. */
  idempotencySafetyMarginMs?: number;
  /** A job not finished within this many seconds is handed to another worker; default 300. */
  expireInSeconds?: number;
}

export interface WorkOptions {
  /** Jobs this worker processes at once; default 8. */
  concurrency?: number;
  /**
   * Requests this worker starts per second at most; default unlimited. A job that cannot start
   * before its deadline (shortly before `expireInSeconds`) is put back untouched and reported:
   * keep `concurrency / ratePerSecond` well under `expireInSeconds`.
   */
  ratePerSecond?: number;
  /** How often an idle worker polls; default 0.5 s (pg-boss's minimum). */
  pollingIntervalSeconds?: number;
  /**
   * After a fatal error (`BatchFatalError`: credentials refused, a bad option) the worker stops
   * taking jobs for this long, then tries again, doubling the pause each time it fails again (up to
   * 5 minutes); default 10,000 ms.
   */
  fatalPauseMs?: number;
  /**
   * Told of every error a job met (the job is put back or retried, never dropped): a
   * `BatchFatalError` pauses the worker. Default: a line on stderr. The error never holds an item.
   */
  onError?: (error: Error, job: { batchId: string; itemId: string }) => void;
}
