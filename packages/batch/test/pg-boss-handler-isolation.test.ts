import { setTimeout as sleep } from "node:timers/promises";
import { expect, it } from "vitest";
import { PgBossBatchQueue } from "../src/index.js";
import { heldClient } from "./support/held-client.js";
import { pgBossWorld } from "./support/pg-boss-world.js";
import { chargeItem, chargesByItem, sandboxRecords } from "./support/sandbox.js";
import { until } from "./support/until.js";

// A fetch's jobs run side by side, and pg-boss fails every job of a fetch whose handler rejects.
// One job's handler that threw (a job with no data, or the application's onError throwing) made
// the fetch reject at once while its other jobs still had calls out: pg-boss failed, and later
// handed out again, a job whose charge was in flight, and stop() no longer waited for its call.
// Now a fetch ends only once every job's handler has; a malformed job is failed loudly, and a
// throwing onError changes nothing but where the error is said.

const world = pgBossWorld(41);

/**
 * While the sibling's call is out, long after its fetch's other job finished: its job's states, and
 * whether stop() resolved before the call was answered. Then the call is answered and stop awaited.
 */
async function whileCallOut(
  stop: () => Promise<void>,
  held: ReturnType<typeof heldClient>,
  queueName: string,
  itemId: string,
) {
  await held.callOut.promise;
  await sleep(1_000);
  const states = await jobStates(queueName, itemId);
  let stopped = false;
  const stopping = stop().then(() => {
    stopped = true;
  });
  await sleep(500);
  const stoppedWhileCallOut = stopped;
  held.answer.resolve();
  await stopping;
  return { states, stoppedWhileCallOut };
}

async function jobStates(queueName: string, itemId: string): Promise<string[]> {
  const { rows } = await world.database.pool.query(
    "SELECT state FROM pgboss.job WHERE name = $1 AND data->>'itemId' = $2 ORDER BY created_on",
    [queueName, itemId],
  );
  return rows.map((row) => String(row.state));
}

it("a malformed job (data null) in the same fetch: the sibling job in flight is not failed by pg-boss, and stop() waits for its call", async () => {
  const held = heldClient(world);
  const { client } = held;
  const boss = await world.startedBoss();
  const queueName = "isolation-null-data";
  const worker = new PgBossBatchQueue({ boss, store: world.database.store, queue: queueName, client });
  const item = chargeItem("sibling-1", world.shop.token(), "7.00");
  await worker.enqueue("null-data", [item]);
  // A job with no data on the queue (a producer bug, or a hand-made job): both are fetched together.
  await boss.insert([{ name: queueName, data: null as unknown as object }]);

  const errors: Error[] = [];
  const stop = await worker.work({ concurrency: 2, onError: (error) => errors.push(error) });
  // The sibling's job must still be active: its first run is still going.
  const { states: whileOut, stoppedWhileCallOut } = await whileCallOut(stop, held, queueName, item.itemId);

  expect.soft(whileOut, "sibling job failed by pg-boss while its call was out").toEqual(["active"]);
  expect.soft(stoppedWhileCallOut, "stop() resolved while a call was still out").toBe(false);
  expect(errors.map((error) => error.message).join("\n")).toMatch(/not a batch item's job/);
}, 60_000);

it("onError that throws does not make pg-boss fail the fetch's other jobs while their calls are out", async () => {
  const held = heldClient(world);
  const { client, calledItems: calls } = held;
  const boss = await world.startedBoss();
  const queueName = "isolation-onerror-throws";
  const worker = new PgBossBatchQueue({ boss, store: world.database.store, queue: queueName, client });
  const item = chargeItem("sibling-2", world.shop.token(), "8.00");
  await worker.enqueue("onerror", [item]);
  // A job whose item is not in the store: reported through onError (and failed loudly).
  await boss.send(queueName, { batchId: "onerror", itemId: "not-registered" });

  const stop = await worker.work({
    concurrency: 2,
    onError: () => {
      throw new Error("the application's logger failed");
    },
  });
  const { states: whileOut, stoppedWhileCallOut } = await whileCallOut(stop, held, queueName, item.itemId);

  expect.soft(whileOut, "sibling job failed by pg-boss while its call was out").toEqual(["active"]);
  expect.soft(stoppedWhileCallOut, "stop() resolved while a call was still out").toBe(false);
  // Still charged once in the end (idempotency holds), whatever the runner did.
  await until(
    "charged",
    () => world.database.store.get("onerror", item.itemId),
    (record) => record?.status === "charged",
  );
  expect(calls.length).toBeGreaterThanOrEqual(1);
  const byItem = chargesByItem(await sandboxRecords(world.shop));
  expect(byItem.get(item.itemId)).toMatchObject({ succeeded: 1, captures: 1 });
}, 60_000);
