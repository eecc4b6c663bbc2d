import { PurchaseAuthClient } from "@purchase-auth/core";
import { resolveDeclinePolicy } from "../engine/decline-policy.js";
import { type RunBatchResult, runBatch } from "../runners/run-batch.js";
import { MemoryBatchStore } from "../state/memory.js";
import { PostgresBatchStore, type PostgresQueryable } from "../state/postgres.js";
import type { BatchStore } from "../state/types.js";
import type { CliOptions } from "./args.js";
import { readCharges } from "./input.js";
import { progressReporter } from "./report.js";
import { type EmbeddedSandbox, startEmbeddedSandbox } from "./sandbox.js";

/** Runs the batch the options describe; `signal` (SIGINT, SIGTERM) stops it between calls. */
export async function runCli(options: CliOptions, signal: AbortSignal): Promise<RunBatchResult> {
  const declinePolicy = options.retryDelaysMs === undefined ? {} : { retryDelaysMs: options.retryDelaysMs };
  // Every line is read and checked before any connection is opened.
  const items = await readCharges(
    options.file,
    options.format,
    resolveDeclinePolicy(declinePolicy).defaultSchedule,
  );

  let sandbox: EmbeddedSandbox | undefined;
  let pool: (PostgresQueryable & { end(): Promise<void> }) | undefined;
  try {
    if (options.sandbox) sandbox = await startEmbeddedSandbox(items);
    const service = sandbox?.service ?? options.service!;
    const client = new PurchaseAuthClient({
      ...service,
      ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
    });
    let store: BatchStore = new MemoryBatchStore();
    if (options.postgresUrl !== undefined) {
      pool = await openPool(options.postgresUrl);
      store = new PostgresBatchStore({ pool });
    }
    const progress = options.quiet ? undefined : progressReporter(process.stderr);
    try {
      return await runBatch({
        client,
        store,
        batchId: options.batchId,
        items,
        declinePolicy,
        signal,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        ...(options.ratePerSecond === undefined ? {} : { ratePerSecond: options.ratePerSecond }),
        ...(options.unknownRetryDelayMs === undefined
          ? {}
          : { unknownRetryDelayMs: options.unknownRetryDelayMs }),
        ...(options.waitUpToMs === undefined ? {} : { waitUpToMs: options.waitUpToMs }),
        ...(progress === undefined ? {} : { onProgress: progress.update, progressIntervalMs: 250 }),
      });
    } finally {
      progress?.end();
    }
  } finally {
    await pool?.end().catch(() => {});
    await sandbox?.close().catch(() => {});
  }
}

/** A `pg` Pool (an optional dependency, loaded only for --postgres), connected once to fail early. */
async function openPool(url: string): Promise<PostgresQueryable & { end(): Promise<void> }> {
  let Pool: typeof import("pg").Pool;
  try {
    Pool = (await import("pg")).default.Pool;
  } catch {
    throw new Error("--postgres needs the package pg: install it next to @purchase-auth/batch");
  }
  const pool = new Pool({ connectionString: url, max: 10 });
  // An idle client's error (the server restarting) must not crash the process; the next query fails.
  pool.on("error", () => {});
  try {
    await pool.query("SELECT 1");
  } catch (error) {
    await pool.end().catch(() => {});
    // pg's messages name the host and user at most, never the password; the URL is not repeated.
    throw new Error(`cannot connect to PostgreSQL (--postgres): ${(error as Error).message}`);
  }
  return pool;
}
