import { randomBytes } from "node:crypto";
import pg from "pg";
import { connectionFromUrl, connectionUrl, ensureDatabase } from "purchase-auth-test-postgres";
import { inject } from "vitest";
import { PostgresBatchStore } from "../../src/index.js";

/** A database of its own in the test server, so files (and child processes) never share rows. */
export async function freshDatabase(): Promise<{
  url: string;
  pool: pg.Pool;
  store: PostgresBatchStore;
  drop(): Promise<void>;
}> {
  const connection = connectionFromUrl(inject("databaseUrl"))!;
  const name = `batch_test_${randomBytes(6).toString("hex")}`;
  await ensureDatabase(connection, name);
  const url = connectionUrl(connection, name);
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  pool.on("error", () => {}); // an idle client cut off when the database is dropped at the end
  const store = new PostgresBatchStore({ pool });
  await store.migrate();
  return {
    url,
    pool,
    store,
    async drop() {
      await pool.end();
      const admin = new pg.Client({ connectionString: connectionUrl(connection) });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
