import type { PgBossJob, PgBossLike } from "./pg-boss-types.js";

// The life of one pg-boss worker of the batch queue (pg-boss.ts handles each job): it starts,
// pauses after a fatal error and starts again, and stops gracefully. pg-boss 10's `offWork` only
// stops fetching: it returns while the worker's handler may still be running a call, so the stop
// function tracks the handlers itself and waits for them.

/** How a job ended: `lost` when its item could be neither put back nor its job failed (the database gone). */
export type JobOutcome = "done" | "failed" | "fatal" | "lost";

export interface JobContext {
  /** The current pause after a fatal error (a fatal job puts its item back for at least as long). */
  pauseMs: number;
  /** Aborts when the worker is asked to stop: a job still waiting to start is put back, not started. */
  stopping: AbortSignal;
}

export interface WorkerLoopOptions {
  boss: PgBossLike;
  queue: string;
  /** Aborted by the stop function (the worker's rate limiter listens to it). */
  stopping: AbortController;
  fetch: { batchSize: number; pollingIntervalSeconds: number };
  /** The first pause after a fatal error; it doubles (up to 5 minutes) while fatal errors go on. */
  basePauseMs: number;
  /** Runs one job; never throws. */
  handleJob(job: PgBossJob, context: JobContext): Promise<JobOutcome>;
  /** Told when the worker could not start again after a pause. */
  onRestartError(error: Error): void;
}

const MAX_FATAL_PAUSE_MS = 300_000;

/**
 * Starts a pg-boss worker; resolves to its stop function. Stopping resolves only once every handler
 * this worker started has finished (its calls answered, its items stored and their next jobs
 * queued), so the caller may close the store's pool and pg-boss right after.
 */
export async function startWorkerLoop(options: WorkerLoopOptions): Promise<() => Promise<void>> {
  const { boss, queue, basePauseMs, stopping } = options;
  const handlersRunning = new Set<Promise<unknown>>();
  let workerId: string | undefined;
  let pauseMs = basePauseMs;
  let resumeTimer: ReturnType<typeof setTimeout> | undefined;
  let restarting: Promise<void> | undefined;

  const handleFetch = async (jobs: PgBossJob[]) => {
    // A fetch that was under way when stop() was called: the caller may be closing the store and
    // pg-boss, so the jobs are not started. Throwing has pg-boss fail them, and its retry hands
    // them out again later; their items were not touched.
    if (stopping.signal.aborted)
      throw new Error("pg-boss worker stopped: jobs fetched as it stopped are retried");
    // Every job's handler finishes before the fetch ends: a rejection (a handler is not meant to
    // throw) must not have pg-boss fail its siblings while their calls are out, nor let stop()
    // return before them. It counts as lost: the fetch's jobs are retried.
    const outcomes = await Promise.all(
      jobs.map((job) =>
        options.handleJob(job, { pauseMs, stopping: stopping.signal }).catch((): JobOutcome => "lost"),
      ),
    );
    if (outcomes.includes("fatal")) pause();
    else if (outcomes.includes("done")) pauseMs = basePauseMs;
    // An item neither put back nor its job failed: completing the fetch would leave it with no
    // job. Throwing has pg-boss fail (and retry) the fetch's jobs, or, with the database still
    // gone, leave them to expire and be handed out again; a job run twice is harmless.
    if (outcomes.includes("lost"))
      throw new Error("pg-boss: an item could not be put back; its jobs are retried");
  };
  const tracked = async (jobs: PgBossJob[]) => {
    const running = handleFetch(jobs);
    handlersRunning.add(running);
    try {
      return await running;
    } finally {
      handlersRunning.delete(running);
    }
  };

  const start = async () => {
    const id = await boss.work(queue, options.fetch, tracked);
    // Stopped while it was starting (after a pause): it stops at once.
    if (stopping.signal.aborted) await boss.offWork({ id });
    else workerId = id;
  };
  const pause = () => {
    if (stopping.signal.aborted || workerId === undefined) return;
    const id = workerId;
    workerId = undefined;
    boss.offWork({ id }).catch(() => {});
    const ms = pauseMs;
    pauseMs = Math.min(MAX_FATAL_PAUSE_MS, Math.max(1, pauseMs) * 2);
    resumeTimer = setTimeout(() => {
      resumeTimer = undefined;
      if (stopping.signal.aborted) return;
      restarting = start()
        .catch((error: unknown) => {
          // Unawaited: a throw here would be an unhandled rejection, and stop() awaits it.
          try {
            options.onRestartError(error instanceof Error ? error : new Error(String(error)));
          } catch {}
        })
        .finally(() => {
          restarting = undefined;
        });
    }, ms);
  };

  await start();
  return async () => {
    stopping.abort(); // jobs still waiting for the rate limiter are put back, not started
    if (resumeTimer !== undefined) clearTimeout(resumeTimer);
    await restarting; // a start under way sees `stopping` and stops its worker itself
    if (workerId !== undefined) {
      const id = workerId;
      workerId = undefined;
      await boss.offWork({ id });
    }
    // pg-boss's offWork does not wait for the handler; a handler must not outlive the stop.
    while (handlersRunning.size > 0) await Promise.allSettled([...handlersRunning]);
  };
}
