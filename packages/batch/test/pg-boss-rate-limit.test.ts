import { PurchaseAuthClient } from "@purchase-auth/core";
import { expect, it } from "vitest";
import { type ChargeClient, PgBossBatchQueue } from "../src/index.js";
import { pgBossWorld } from "./support/pg-boss-world.js";
import { chargeItem, chargesByItem, FAST_RETRIES, sandboxRecords } from "./support/sandbox.js";
import { until } from "./support/until.js";

// A pg-boss job's wait for the worker's `ratePerSecond` is bounded by the job's deadline, as its
// call is: a job that cannot start in time is put back untouched, never started late (after pg-boss
// may have handed it to another worker), and its item is still charged, once.

const world = pgBossWorld(17);

async function jobsOf(queueName: string): Promise<Array<{ state: string; retry_count: number }>> {
  const { rows } = await world.database.pool.query(
    "SELECT state, retry_count FROM pgboss.job WHERE name = $1 ORDER BY created_on",
    [queueName],
  );
  return rows as Array<{ state: string; retry_count: number }>;
}

it("a job held back by ratePerSecond past its deadline is put back untouched, then charged once", async () => {
  const good = new PurchaseAuthClient({ ...world.shop.credentials, ...FAST_RETRIES, maxRetries: 0 });
  // Calls that started with their job's deadline already passed (the job was held back too long).
  const startedPastDeadline: string[] = [];
  const client: ChargeClient = {
    authorizations: {
      create(request, options) {
        if (options?.signal?.aborted) startedPastDeadline.push(String(request.order.reference));
        return good.authorizations.create(request, options);
      },
    },
  };
  const errors: Error[] = [];
  // expireInSeconds 3: each job's deadline is at 2.4 s. The three jobs of the first fetch get the
  // slots of 2/3 per second: at once, at 1.5 s and at 3 s, past the third job's deadline.
  const worker = new PgBossBatchQueue({
    boss: await world.startedBoss(),
    store: world.database.store,
    queue: "rate-deadline",
    client,
    expireInSeconds: 3,
  });
  const items = ["held-a", "held-b", "held-c"].map((id) => chargeItem(id, world.shop.token(), "3.00"));
  await worker.enqueue("held", items); // all three jobs are queued before the worker fetches them
  await worker.work({
    concurrency: 3,
    ratePerSecond: 2 / 3,
    pollingIntervalSeconds: 0.5,
    onError: (error) => errors.push(error),
  });

  const records = await until(
    "all charged",
    () => Promise.all(items.map((item) => world.database.store.get("held", item.itemId))),
    (all) => all.every((record) => record?.status === "charged"),
  );
  expect(startedPastDeadline).toEqual([]);
  // The held-back item was left as if its job never ran: no write-ahead, no "not sent" call logged.
  for (const record of records) {
    expect(
      record?.log.map((entry) => entry.outcome),
      record?.itemId,
    ).toEqual(["done"]);
    expect(record?.attempt, record?.itemId).toBe(1);
  }
  // Its job was put back by the worker, before it expired: pg-boss handed no job out again.
  const jobs = await until(
    "jobs done",
    () => jobsOf("rate-deadline"),
    (rows) => rows.every((row) => row.state === "completed"),
  );
  expect(jobs.filter((row) => row.retry_count > 0)).toEqual([]);
  expect(jobs.length).toBeGreaterThan(items.length); // at least one job was put back
  expect(errors.length).toBeGreaterThanOrEqual(1);
  for (const error of errors) expect(error.message).toMatch(/held back by ratePerSecond/);
  const byItem = chargesByItem(await sandboxRecords(world.shop));
  for (const item of items) {
    expect(byItem.get(item.itemId), item.itemId).toMatchObject({ succeeded: 1, captures: 1 });
  }
}, 60_000);
