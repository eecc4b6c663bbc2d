import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresChargeStore } from "../src/index.js";
import { freshSchema } from "./support/database.js";
import { chargeSentAt, nextWeek, offlineRouter } from "./support/offline-router.js";

// The reconciler's sweep over PostgreSQL, as real databases are set up: references ordered by a
// language collation (en_US is the default of the postgres image, Debian and RDS), and rows an
// operator touched with now() (microseconds). The sweep judged page order in JavaScript and, at a
// page edge where the two orders disagree, started over there on every pass: the pending charges
// after it were never looked at.

const databases: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
afterEach(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

/** 199 accepted charges a second apart, two written in one millisecond, then a newer one. */
async function pendingSweep(change?: (pool: import("pg").Pool) => Promise<unknown>) {
  const database = await freshSchema();
  databases.push(database);
  const pool = database.newPool();
  const store = new PostgresChargeStore({ pool });
  await store.migrate();
  await change?.(pool);
  const base = Date.UTC(2026, 0, 1);
  const schedule = nextWeek();
  const add = (reference: string, at: number) =>
    store.create(chargeSentAt(at, schedule, { reference, authorizationId: randomUUID() }));
  for (let index = 0; index < 199; index++)
    await add(`p-${String(index).padStart(3, "0")}`, base + index * 1000);
  await add("a-tie", base + 500_000);
  await add("B-tie", base + 500_000);
  await add("z-newer", base + 900_000);
  const router = offlineRouter({ store });
  return { router, pool };
}

describe("the reconciler's sweep over PostgreSQL", () => {
  it("reaches every pending charge when references are ordered by a language collation", async () => {
    const { router } = await pendingSweep((pool) =>
      pool.query(`ALTER TABLE purchase_auth_charges ALTER COLUMN reference TYPE text COLLATE "en-US-x-icu"`),
    );
    const examined: number[] = [];
    for (let pass = 0; pass < 3; pass++) examined.push((await router.reconcile()).examined);
    await router.close();
    expect(examined).toEqual([202, 202, 202]);
  });

  it("reaches every pending charge when rows at a page edge were written with microseconds", async () => {
    const { router, pool } = await pendingSweep();
    await pool.query(
      "UPDATE purchase_auth_charges SET updated_at = updated_at + interval '400 microseconds' WHERE reference IN ('a-tie', 'B-tie')",
    );
    const examined: number[] = [];
    for (let pass = 0; pass < 3; pass++) examined.push((await router.reconcile()).examined);
    await router.close();
    expect(examined).toEqual([202, 202, 202]);
  });
});
