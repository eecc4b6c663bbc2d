import { startTestPostgres } from "purchase-auth-test-postgres";
import type { TestProject } from "vitest/node";

// One PostgreSQL server for the project's PostgresChargeStore tests, from the repository's shared
// helper: DATABASE_URL's server when set, otherwise an embedded one, stopped when the run ends.
// Each test file makes a schema of its own in it (test/support/database.ts).

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await startTestPostgres();
  project.provide("databaseUrl", postgres.url);
  return () => postgres.stop();
}
