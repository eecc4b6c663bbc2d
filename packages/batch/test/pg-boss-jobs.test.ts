import { PurchaseAuthClient } from "@purchase-auth/core";
import { expect, it } from "vitest";
import {
  type BatchItemRecord,
  type BatchStore,
  type ChargeClient,
  MemoryBatchStore,
  PgBossBatchQueue,
  type PgBossBatchQueueOptions,
} from "../src/index.js";
import { freshDatabase } from "./support/database.js";
import { pgBossWorld } from "./support/pg-boss-world.js";
import { chargeItem, chargesByItem, FAST_RETRIES, injectFaults, sandboxRecords } from "./support/sandbox.js";
import { until } from "./support/until.js";

// How the pg-boss runner treats its jobs: each job on its own (one failing job never fails the
// others of its fetch), a fatal error pauses the worker instead of failing jobs, a call is cut short
// before the job would expire, and a job whose item is not in the worker's store is never
// completed silently.

const world = pgBossWorld(13);

const goodClient = () =>
  new PurchaseAuthClient({ ...world.shop.credentials, ...FAST_RETRIES, maxRetries: 0 });

async function queue(
  name: string,
  options: Partial<PgBossBatchQueueOptions> = {},
): Promise<PgBossBatchQueue> {
  return new PgBossBatchQueue({
    boss: await world.startedBoss(),
    store: world.database.store,
    queue: name,
    client: goodClient(),
    unknownRetryDelayMs: 200,
    ...options,
  });
}

async function jobsOf(
  queueName: string,
): Promise<Array<{ item: string; state: string; retry_count: number }>> {
  const { rows } = await world.database.pool.query(
    "SELECT data->>'itemId' AS item, state, retry_count FROM pgboss.job WHERE name = $1 ORDER BY created_on",
    [queueName],
  );
  return rows as Array<{ item: string; state: string; retry_count: number }>;
}

const statuses = async (batchId: string) => {
  const out: string[] = [];
  for await (const record of world.database.store.items(batchId)) out.push(record.status);
  return out;
};

it("one job failing (a database error) fails neither the other jobs of its fetch nor itself for good", async () => {
  let failOnce = true;
  // The store, except that reading item "bad" fails once (a passing database error).
  const store = new Proxy(world.database.store, {
    get(target, property) {
      if (property === "get") {
        return (batchId: string, itemId: string): Promise<BatchItemRecord | undefined> => {
          if (itemId === "fetch-bad" && failOnce) {
            failOnce = false;
            return Promise.reject(new Error("connection terminated unexpectedly"));
          }
          return target.get(batchId, itemId);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as BatchStore;
  const errors: Error[] = [];
  const worker = await queue("jobs-fetch", { store });
  const items = ["fetch-bad", "fetch-a", "fetch-b", "fetch-c"].map((id) =>
    chargeItem(id, world.shop.token(), "5.00"),
  );
  await worker.enqueue("fetch", items); // all four jobs are queued before the worker fetches them
  await worker.work({ concurrency: 4, pollingIntervalSeconds: 0.5, onError: (error) => errors.push(error) });

  await until(
    "all charged",
    () => statuses("fetch"),
    (all) => all.every((status) => status === "charged"),
  );
  expect(failOnce).toBe(false);
  const jobs = await until(
    "jobs done",
    () => jobsOf("jobs-fetch"),
    (rows) => rows.every((row) => row.state === "completed"),
  );
  // No job was failed: the innocent ones ran once; the bad one was put back as a new job.
  expect(jobs.filter((row) => row.retry_count > 0)).toEqual([]);
  expect(errors.map((error) => error.message)).toEqual(["connection terminated unexpectedly"]);
  const byItem = chargesByItem(await sandboxRecords(world.shop));
  for (const item of items) expect(byItem.get(item.itemId), item.itemId).toMatchObject({ succeeded: 1 });
}, 60_000);

it("credentials refused for a while pause the worker; no job is failed, and every item is charged after", async () => {
  let refused = true;
  let refusedCalls = 0;
  const bad = new PurchaseAuthClient({
    ...world.shop.credentials,
    clientSecret: "not-the-secret",
    ...FAST_RETRIES,
  });
  const good = goodClient();
  const client: ChargeClient = {
    authorizations: {
      create: (request, options) => {
        if (refused) refusedCalls++;
        return (refused ? bad : good).authorizations.create(request, options);
      },
    },
  };
  const errors: Error[] = [];
  const worker = await queue("jobs-fatal", { client });
  const items = ["fatal-a", "fatal-b", "fatal-c"].map((id) => chargeItem(id, world.shop.token(), "6.00"));
  await worker.enqueue("fatal", items);
  await worker.work({
    concurrency: 3,
    pollingIntervalSeconds: 0.5,
    fatalPauseMs: 1_000,
    onError: (error) => errors.push(error),
  });
  await until(
    "refused",
    async () => refusedCalls,
    (n) => n >= 1,
    30_000,
  );
  refused = false; // the credentials are accepted again

  await until(
    "all charged",
    () => statuses("fatal"),
    (all) => all.every((status) => status === "charged"),
  );
  const jobs = await until(
    "jobs done",
    () => jobsOf("jobs-fatal"),
    (rows) => rows.every((row) => row.state === "completed"),
  );
  expect(jobs.filter((row) => row.retry_count > 0)).toEqual([]);
  expect(errors.length).toBeGreaterThanOrEqual(1);
  expect(errors.every((error) => error.name === "BatchFatalError")).toBe(true);
}, 60_000);

it("a call still out when the job is about to expire is cut short: the job completes and is not handed out again", async () => {
  const worker = await queue("jobs-expire", { expireInSeconds: 3 });
  const item = chargeItem("expire-1", world.shop.token(), "8.00");
  await injectFaults(world.shop, [{ kind: "latency", latencyMs: 6_000, count: 1 }]);
  await worker.enqueue("expire", [item]);
  await worker.work({ concurrency: 2, pollingIntervalSeconds: 0.5, onError: () => {} });

  const final = await until(
    "charged",
    () => world.database.store.get("expire", item.itemId) as Promise<BatchItemRecord>,
    (r) => r.status === "charged",
  );
  const jobs = await until(
    "jobs done",
    () => jobsOf("jobs-expire"),
    (rows) => rows.every((row) => row.state === "completed"),
  );
  expect(jobs.filter((row) => row.retry_count > 0)).toEqual([]);
  expect(final.log[0]?.outcome).toBe("unknown"); // the first call was cut short
  expect(chargesByItem(await sandboxRecords(world.shop)).get(item.itemId)).toMatchObject({
    succeeded: 1,
    captures: 1,
  });
}, 60_000);

it("refuses a MemoryBatchStore, which other workers cannot share", async () => {
  const boss = await world.startedBoss();
  expect(() => new PgBossBatchQueue({ boss, store: new MemoryBatchStore(), client: goodClient() })).toThrow(
    /MemoryBatchStore/,
  );
});

it("a job whose item is not in the worker's store is failed loudly, not completed", async () => {
  const producer = await queue("jobs-missing");
  const item = chargeItem("missing-1", world.shop.token(), "4.00");
  await producer.enqueue("missing", [item]);
  // A worker pointed at another database (its store is empty), on the same pg-boss.
  const elsewhere = await freshDatabase();
  world.dropLater(() => elsewhere.drop());
  const errors: Error[] = [];
  const worker = await queue("jobs-missing", { store: elsewhere.store });
  await worker.work({ concurrency: 2, pollingIntervalSeconds: 0.5, onError: (error) => errors.push(error) });

  const jobs = await until(
    "job handled",
    () => jobsOf("jobs-missing"),
    (rows) => rows.some((row) => row.state !== "created" && row.state !== "active"),
  );
  expect(jobs.map((row) => row.state)).not.toContain("completed");
  expect(errors[0]?.message).toMatch(/no such item/);
  expect((await world.database.store.get("missing", item.itemId))?.status).toBe("pending");
}, 60_000);

it("an item that can be neither put back nor its job failed (the database gone a moment) keeps a job", async () => {
  // Found by a review: the follow-up, the put-back and fail() all failing left the job completed and
  // the item unknown with no job, until someone called resume().
  const boss = await world.startedBoss();
  let blip = 0;
  const passing = () => {
    blip--;
    return Promise.reject(new Error("connection terminated unexpectedly"));
  };
  const blinking = new Proxy(boss, {
    get(target, property) {
      if (property === "send" || property === "fail") {
        const real = (target[property] as (...args: unknown[]) => Promise<unknown>).bind(target);
        return (...args: unknown[]) => (blip > 0 ? passing() : real(...args));
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const blinkingQueue = new PgBossBatchQueue({
    boss: blinking,
    store: world.database.store,
    queue: "jobs-blip",
    client: goodClient(),
    unknownRetryDelayMs: 200,
  });
  const item = chargeItem("blip-1", world.shop.token(), "7.00");
  await injectFaults(world.shop, [{ kind: "gateway_error", status: 502, phase: "after_commit", count: 1 }]);
  await blinkingQueue.enqueue("blip", [item]);
  blip = 3; // the follow-up's send, the put-back's send, fail()
  await blinkingQueue.work({ concurrency: 1, pollingIntervalSeconds: 0.5, onError: () => {} });

  const charged = await until(
    "charged",
    () => world.database.store.get("blip", item.itemId),
    (record) => record?.status === "charged",
  );
  expect(charged?.log.map((entry) => entry.outcome)).toEqual(["unknown", "done"]);
  const byItem = chargesByItem(await sandboxRecords(world.shop));
  expect(byItem.get(item.itemId)?.succeeded).toBe(1);
}, 90_000);
