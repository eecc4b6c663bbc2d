import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { PostgresChargeStore } from "../../src/index.js";

/** A schema of its own in the test server, so files never see each other's rows. */
export async function freshSchema(): Promise<{
  config: pg.ClientConfig;
  newPool(): pg.Pool;
  drop(): Promise<void>;
}> {
  const url = inject("databaseUrl");
  const schema = `express_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pools: pg.Pool[] = [];
  const config = { connectionString: url, options: `-c search_path=${schema}` };
  return {
    config,
    newPool() {
      const pool = new pg.Pool({ ...config, max: 4 });
      pools.push(pool);
      return pool;
    },
    async drop() {
      await Promise.all(pools.map((pool) => pool.end()));
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** A migrated PostgresChargeStore on its own pool (one pool = one app instance). */
export async function postgresStore(pool: pg.Pool): Promise<PostgresChargeStore> {
  const store = new PostgresChargeStore({ pool });
  await store.migrate();
  return store;
}
