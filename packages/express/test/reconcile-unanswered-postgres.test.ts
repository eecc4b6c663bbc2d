import { afterEach, describe, expect, it } from "vitest";
import { PostgresChargeStore } from "../src/index.js";
import { pageQueries, UNANSWERED } from "../src/stores/postgres-schema.js";
import { freshSchema } from "./support/database.js";
import { chargeSentAt, nextWeek, offlineRouter } from "./support/offline-router.js";

const databases: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
afterEach(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

async function filled(accepted: number, unanswered: number, analyze: boolean) {
  const database = await freshSchema();
  databases.push(database);
  const pool = database.newPool();
  const store = new PostgresChargeStore({ pool });
  await store.migrate();
  const base = Date.UTC(2026, 0, 1);
  // Bulk rows like the store writes them.
  await pool.query(
    `INSERT INTO purchase_auth_charges (reference, customer_id, attempt, authorization_id, status, amount, currency, capture_mode, operations, version, created_at, updated_at)
     SELECT 'acc-' || g, 'c', 1, gen_random_uuid()::text, 'pending', '1.00', 'EUR', 'Auto', '{"capture":0,"cancel":0,"refund":0}'::jsonb, 1,
            to_timestamp($1::bigint / 1000.0) + g * interval '1 second', to_timestamp($1::bigint / 1000.0) + g * interval '1 second'
     FROM generate_series(1, $2::int) g`,
    [base, accepted],
  );
  for (let i = 0; i < unanswered; i++) await store.create(chargeSentAt(Date.now() - 60_000 + i, nextWeek()));
  if (analyze) await pool.query("ANALYZE purchase_auth_charges");
  return { pool, store };
}

async function plan(pool: import("pg").Pool, sql: string, params: unknown[]): Promise<string> {
  const rows = (await pool.query(`EXPLAIN ${sql}`, params)).rows as Array<{ "QUERY PLAN": string }>;
  return rows.map((row) => row["QUERY PLAN"]).join("\n");
}

/** The store's own queries of listUnanswered. */
const { first: FIRST, after: NEXT } = pageQueries(UNANSWERED);

describe("listUnanswered over PostgreSQL", () => {
  for (const analyze of [true, false]) {
    it(`uses the unanswered index among 20,000 accepted charges (analyzed: ${analyze})`, async () => {
      const { pool, store } = await filled(20_000, 3, analyze);
      const first = await plan(pool, FIRST, [200]);
      const next = await plan(pool, NEXT, [200, new Date(0).toISOString(), ""]);
      expect(first).toContain("purchase_auth_charges_unanswered");
      expect(next).toContain("purchase_auth_charges_unanswered");
      expect(await store.listUnanswered(200)).toHaveLength(3);
    }, 60_000);
  }

  it("one reconcile pass resends the unanswered among 20,000 accepted (listed once each)", async () => {
    const { store } = await filled(20_000, 3, true);
    const router = offlineRouter({ store });
    const report = await router.reconcile();
    await router.close();
    // 3 unanswered + 2,000 swept accepted; the client points nowhere: stillUnknown 3.
    expect(report).toMatchObject({ examined: 2_003, stillUnknown: 3 });
  }, 60_000);
});
