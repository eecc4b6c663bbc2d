import { PurchaseAuthClient, type PurchaseAuthClientOptions } from "@purchase-auth/core";
import { expect, it } from "vitest";
import { type BatchItemRecord, PgBossBatchQueue, type PgBossBatchQueueOptions } from "../src/index.js";
import { pgBossWorld } from "./support/pg-boss-world.js";
import { chargeItem, chargesByItem, FAST_RETRIES, injectFaults, sandboxRecords } from "./support/sandbox.js";
import { until } from "./support/until.js";

// The pg-boss runner never drops an item's chain of jobs: an unknown outcome is resent (at growing
// delays) until it is answered or the key's window has passed, a run that found the item not yet
// due (the worker's clock behind the database's) is not a resend, and `waitFor` in another process
// does not wait for ever for an item that has no job.

const world = pgBossWorld(11);

async function queue(
  name: string,
  options: Partial<PgBossBatchQueueOptions> = {},
  client: Partial<PurchaseAuthClientOptions> = {},
): Promise<PgBossBatchQueue> {
  const boss = await world.startedBoss();
  return new PgBossBatchQueue({
    boss,
    store: world.database.store,
    queue: name,
    client: new PurchaseAuthClient({ ...world.shop.credentials, ...FAST_RETRIES, maxRetries: 0, ...client }),
    ...options,
  });
}

const record = (batchId: string, itemId: string) =>
  world.database.store.get(batchId, itemId) as Promise<BatchItemRecord>;

async function jobsOf(itemId: string): Promise<Array<{ state: string; retry_count: number }>> {
  const { rows } = await world.database.pool.query(
    "SELECT state, retry_count FROM pgboss.job WHERE data->>'itemId' = $1 ORDER BY created_on",
    [itemId],
  );
  return rows as Array<{ state: string; retry_count: number }>;
}

it("an item left unknown by an outage longer than maxUnknownResends is still resent, and converges", async () => {
  const item = chargeItem("strand-1", world.shop.token(), "25.00");
  const producer = await queue("chain-outage", { unknownRetryDelayMs: 1_500, maxUnknownResends: 2 }); // works nothing
  const worker = await queue("chain-outage", {
    unknownRetryDelayMs: 1_500,
    maxUnknownResends: 2,
    maxUnknownResendDelayMs: 3_000,
  });
  await injectFaults(world.shop, [{ kind: "gateway_error", status: 502, phase: "after_commit", count: 1 }]);
  await producer.enqueue("strand", [item]);
  await worker.work({ concurrency: 2, pollingIntervalSeconds: 0.5, onError: () => {} });
  await until(
    "unknown",
    () => record("strand", item.itemId),
    (r) => r.status === "unknown",
    20_000,
  );
  // An outage of three 503s: more resends than maxUnknownResends (2); then the service is healthy.
  await injectFaults(world.shop, [{ kind: "unavailable", count: 3 }]);

  const final = await until(
    "charged",
    () => record("strand", item.itemId),
    (r) => r.status !== "unknown",
  );
  expect(final.status).toBe("charged");
  expect(final.log.filter((entry) => entry.outcome === "unknown").length).toBeGreaterThanOrEqual(4);
  // The producer, another process, sees it too.
  const summary = await producer.waitFor("strand", { pollMs: 200, signal: AbortSignal.timeout(30_000) });
  expect(summary).toMatchObject({ total: 1, charged: 1, unknown: 0, complete: true });
  expect(chargesByItem(await sandboxRecords(world.shop)).get(item.itemId)).toMatchObject({
    succeeded: 1,
    captures: 1,
  });
}, 90_000);

it("an unknown outcome is resent until the key's window has passed, then needs review, and the chain ends", async () => {
  // A short window (10 s, less a 2 s margin) on the client and on the queue.
  const window = { idempotencyWindowMs: 10_000, idempotencySafetyMarginMs: 2_000 };
  const worker = await queue(
    "chain-window",
    { unknownRetryDelayMs: 500, maxUnknownResends: 1, maxUnknownResendDelayMs: 2_000, ...window },
    window,
  );
  const item = chargeItem("window-1", world.shop.token(), "12.00");
  await injectFaults(world.shop, [
    { kind: "gateway_error", status: 502, phase: "after_commit", count: 1 },
    { kind: "unavailable", count: null }, // then the service never answers again
  ]);
  await worker.enqueue("window", [item]);
  await worker.work({ concurrency: 2, pollingIntervalSeconds: 0.5, onError: () => {} });

  const final = await until(
    "final",
    () => record("window", item.itemId),
    (r) => r.status !== "unknown" && r.status !== "sending" && r.status !== "pending",
  );
  expect(final.status).toBe("needs_review");
  expect(final.reason).toBe("IDEMPOTENCY_WINDOW_PASSED");
  const unknowns = final.log.filter((entry) => entry.outcome === "unknown");
  expect(unknowns.length).toBeGreaterThanOrEqual(3); // resent past maxUnknownResends
  const firstSent = final.firstSentAt!.getTime();
  // The last resend was made near the end of the window (it ends 8 s after the first send; the
  // last chance is 7.2 s), not dropped nor left to a resend past the window.
  const lastResend = Math.max(...unknowns.map((entry) => new Date(entry.at).getTime()));
  expect(lastResend - firstSent).toBeGreaterThanOrEqual(6_500);
  expect(final.log.at(-1)?.outcome).toBe("window_passed");
  // No job is left for the final item.
  const jobs = await until(
    "chain ended",
    () => jobsOf(item.itemId),
    (rows) => rows.every((row) => row.state === "completed"),
  );
  expect(jobs.every((row) => row.retry_count === 0)).toBe(true);
}, 90_000);

it("waitFor (in another process) does not wait for an open item that has no job; resume queues it again", async () => {
  const producer = await queue("chain-orphan");
  const item = chargeItem("orphan-1", world.shop.token(), "7.00");
  await producer.enqueue("orphan", [item]);
  // pg-boss gave up on the item's job (a job failed for good): the item is open and has no job.
  await world.database.pool.query("UPDATE pgboss.job SET state = 'failed' WHERE data->>'itemId' = $1", [
    item.itemId,
  ]);

  const summary = await producer.waitFor("orphan", {
    pollMs: 100,
    strandedAfterMs: 1_000,
    signal: AbortSignal.timeout(30_000),
  });
  expect(summary).toMatchObject({ total: 1, pending: 1, complete: false });

  expect(await producer.resume("orphan")).toEqual({ queued: 1 });
  const worker = await queue("chain-orphan");
  await worker.work({ concurrency: 2, pollingIntervalSeconds: 0.5 });
  expect(
    await producer.waitFor("orphan", { pollMs: 100, signal: AbortSignal.timeout(30_000) }),
  ).toMatchObject({
    charged: 1,
    complete: true,
  });
}, 60_000);

it("a worker whose clock is behind the database's neither counts early runs as resends nor loops on them", async () => {
  const lagMs = 10_000;
  const worker = await queue("chain-clock", {
    unknownRetryDelayMs: 5_000,
    maxUnknownResends: 2,
    now: () => new Date(Date.now() - lagMs),
  });
  const item = chargeItem("clock-1", world.shop.token(), "3.00");
  await injectFaults(world.shop, [{ kind: "gateway_error", status: 502, phase: "after_commit", count: 1 }]);
  await worker.enqueue("clock", [item]);
  await worker.work({ concurrency: 2, pollingIntervalSeconds: 0.5, onError: () => {} });

  const final = await until(
    "final",
    () => record("clock", item.itemId),
    (r) => r.status !== "unknown" && r.status !== "pending" && r.status !== "sending",
    45_000,
  );
  expect(final.status).toBe("charged");
  expect(final.log.map((entry) => entry.outcome)).toEqual(["unknown", "done"]);
  // The enqueued job, the follow-up after the 502 (queued for when the item is due by the worker's
  // clock), and at most one early run in between.
  expect((await jobsOf(item.itemId)).length).toBeLessThanOrEqual(3);
}, 60_000);

it("waitFor waits for a due item behind 10,000 open ones scheduled beyond its horizon", async () => {
  // Found by a review: it looked at the first 10,000 open items in registration order only, and
  // returned while a later one was due and had its job.
  const waiter = await queue("chain-many");
  const items = Array.from({ length: 10_001 }, (_, i) => chargeItem(`many-${i}`, world.shop.token(), "1.00"));
  await world.database.store.register("many", items);
  // The first 10,000: a decline's retry scheduled in an hour, beyond waitFor's minute.
  await world.database.pool.query(
    `UPDATE purchase_auth_batch_items SET status = 'retry_scheduled', attempt = 1,
       not_before = now() + interval '1 hour'
     WHERE batch_id = 'many' AND item_id <> 'many-10000'`,
  );
  // The last one is due now and has its job (no worker runs: the job stays queued).
  await waiter.resume("many");
  const waited = waiter.waitFor("many", { pollMs: 100, signal: AbortSignal.timeout(3_000) }).then(
    () => "returned",
    (error: Error) => error.name,
  );
  expect(await waited).toBe("AbortError");
}, 60_000);
