import { type PostgresConnection, startTestPostgres } from "purchase-auth-test-postgres";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresConnection;
  }
}

/** One PostgreSQL for the whole project: DATABASE_URL's, or an embedded one started here. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const postgres = await startTestPostgres();
  project.provide("postgres", postgres.connection);
  return () => postgres.stop();
}
