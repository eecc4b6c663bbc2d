import { randomBytes } from "node:crypto";
import pg from "pg";
import { type PostgresConnection, startTestPostgres } from "purchase-auth-test-postgres";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresConnection;
    /** This run's name for the migrated database the files' databases are copied from. */
    databaseTemplate: string | undefined;
  }
}

/**
 * One PostgreSQL for the whole project: DATABASE_URL's, or an embedded one started here. The first
 * test file makes this run's template database (database-template.ts), which is dropped at the end.
 * PURCHASE_AUTH_NO_DB_TEMPLATE=1 leaves it out: every file then migrates its database itself.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await startTestPostgres();
  // A name of this run's own, so runs sharing DATABASE_URL's server never use each other's.
  const template =
    process.env.PURCHASE_AUTH_NO_DB_TEMPLATE === "1"
      ? undefined
      : `purchase-auth-medusa-template-${randomBytes(4).toString("hex")}`;
  project.provide("postgres", postgres.connection);
  project.provide("databaseTemplate", template);
  return async () => {
    if (template) await dropDatabase(postgres.connection, template);
    await postgres.stop();
  };
}

async function dropDatabase(connection: PostgresConnection, name: string): Promise<void> {
  const client = new pg.Client({ ...connection, database: "postgres" });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}
