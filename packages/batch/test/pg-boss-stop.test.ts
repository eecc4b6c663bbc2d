import pg from "pg";
import type PgBoss from "pg-boss";
import { expect, it } from "vitest";
import {
  type BatchStore,
  type ChargeClient,
  PgBossBatchQueue,
  type PgBossBatchQueueOptions,
  PostgresBatchStore,
} from "../src/index.js";
import { deferred, goodClient, heldClient } from "./support/held-client.js";
import { pgBossWorld } from "./support/pg-boss-world.js";
import { chargeItem, chargesByItem, sandboxRecords } from "./support/sandbox.js";
import { until } from "./support/until.js";

// Stopping a pg-boss worker is graceful: the stop function resolves only when the jobs in hand have
// finished, so a caller can close the store's pool (and pg-boss) right after. Jobs not started yet
// (waiting for `ratePerSecond`, or fetched as the worker stopped) are left for another worker,
// untouched, and charged once later.

const world = pgBossWorld(19);

/** A store on a pool of the worker's own, which the test closes once the worker is stopped. */
function ownStore(): { store: BatchStore; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: world.database.url, max: 4 });
  pool.on("error", () => {});
  return { store: new PostgresBatchStore({ pool }), pool };
}

async function queue(
  name: string,
  options: Partial<PgBossBatchQueueOptions> = {},
  boss?: PgBoss,
): Promise<PgBossBatchQueue> {
  return new PgBossBatchQueue({
    boss: boss ?? (await world.startedBoss()),
    store: world.database.store,
    queue: name,
    client: goodClient(world),
    ...options,
  });
}

const record = (batchId: string, itemId: string) => world.database.store.get(batchId, itemId);

async function chargedOnce(itemIds: string[]): Promise<void> {
  const byItem = chargesByItem(await sandboxRecords(world.shop));
  for (const itemId of itemIds) {
    expect(byItem.get(itemId), itemId).toMatchObject({ succeeded: 1, captures: 1 });
  }
}

it("stop() resolves once the job in hand has finished: the worker's pool can be closed right after", async () => {
  const { client, callOut, answer } = heldClient(world);
  const { store, pool } = ownStore();
  const errors: Error[] = [];
  const worker = await queue("stop-in-hand", { store, client });
  const item = chargeItem("in-hand-1", world.shop.token(), "4.00");
  await worker.enqueue("in-hand", [item]);
  const stop = await worker.work({ concurrency: 2, onError: (error) => errors.push(error) });

  await callOut.promise; // the job is in hand: its item written ahead, its call out
  const stopped = stop();
  answer.resolve(); // the service answers while the worker stops
  await stopped;
  await pool.end(); // what a caller does once the worker has stopped

  expect(await record("in-hand", item.itemId)).toMatchObject({ status: "charged" });
  expect(errors).toEqual([]);
  await chargedOnce([item.itemId]);
}, 60_000);

it("a job still waiting for ratePerSecond when the worker stops is put back untouched, and charged once later", async () => {
  const { client, callOut, answer, calledItems } = heldClient(world);
  const { store, pool } = ownStore();
  const errors: Error[] = [];
  const worker = await queue("stop-waiting", { store, client });
  const items = ["waiting-a", "waiting-b"].map((id) => chargeItem(id, world.shop.token(), "5.00"));
  await worker.enqueue("waiting", items);
  // One start every 10 s: the first job's call goes out, the second job waits for its slot.
  const stop = await worker.work({
    concurrency: 2,
    ratePerSecond: 0.1,
    onError: (error) => errors.push(error),
  });

  await callOut.promise;
  const stopped = stop();
  answer.resolve();
  await stopped; // without waiting for the second job's slot
  await pool.end();

  const [called, waited] =
    calledItems[0] === "waiting-a" ? ["waiting-a", "waiting-b"] : ["waiting-b", "waiting-a"];
  expect(calledItems).toEqual([called]);
  expect(await record("waiting", called)).toMatchObject({ status: "charged" });
  // Untouched: as registered, nothing written ahead, no call logged.
  expect(await record("waiting", waited)).toMatchObject({ status: "pending", attempt: 0, log: [] });
  expect(errors).toEqual([]);

  // Its job was put back: the next worker charges it.
  const next = await queue("stop-waiting");
  const stopNext = await next.work({ concurrency: 2 });
  await until(
    "charged by the next worker",
    () => record("waiting", waited),
    (found) => found?.status === "charged",
  );
  await stopNext();
  await chargedOnce([called, waited]);
}, 60_000);

it("jobs pg-boss fetched while the worker stopped are not started; pg-boss retries them, and they are charged once", async () => {
  const boss = await world.startedBoss();
  const fetched = deferred();
  const delivered = deferred();
  // pg-boss with the worker's first fetch held back: it reaches the worker's handler only after
  // the worker was stopped, as a fetch still under way when stop() is called does.
  let holding = true;
  const slowFetch = new Proxy(boss, {
    get(target, property) {
      if (property === "work") {
        return (name: string, options: PgBoss.WorkOptions, handler: PgBoss.WorkHandler<unknown>) =>
          target.work(name, options, async (jobs) => {
            if (holding) {
              holding = false;
              fetched.resolve();
              await delivered.promise;
            }
            return handler(jobs);
          });
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  let calls = 0;
  const good = goodClient(world);
  const client: ChargeClient = {
    authorizations: {
      create(request, options) {
        calls++;
        return good.authorizations.create(request, options);
      },
    },
  };
  const worker = await queue("stop-fetching", { client }, slowFetch);
  const item = chargeItem("fetching-1", world.shop.token(), "6.00");
  await worker.enqueue("fetching", [item]);
  const stop = await worker.work({ concurrency: 2, onError: () => {} });

  await fetched.promise;
  await stop();
  delivered.resolve(); // the fetch reaches the stopped worker

  const jobs = await until(
    "job no longer active",
    async () =>
      (await world.database.pool.query("SELECT state FROM pgboss.job WHERE name = $1", ["stop-fetching"]))
        .rows as Array<{ state: string }>,
    (rows) => rows.every((row) => row.state !== "created" && row.state !== "active"),
  );
  expect(jobs).toEqual([{ state: "retry" }]); // failed by the refusal, for pg-boss to retry
  expect(calls).toBe(0);
  expect(await record("fetching", item.itemId)).toMatchObject({ status: "pending", attempt: 0, log: [] });

  // pg-boss's retry hands the job to the next worker.
  const next = await queue("stop-fetching", { client });
  const stopNext = await next.work({ concurrency: 2 });
  await until(
    "charged after the retry",
    () => record("fetching", item.itemId),
    (found) => found?.status === "charged",
  );
  await stopNext();
  expect(calls).toBe(1);
  await chargedOnce([item.itemId]);
}, 60_000);
