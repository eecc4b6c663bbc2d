import type { TestProject } from "vitest/node";
import { connectionFromUrl, type PostgresConnection, startEmbeddedPostgres } from "./embedded-postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresConnection;
  }
}

/** One PostgreSQL for the whole project: DATABASE_URL's, or an embedded one started here. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = connectionFromUrl(process.env.DATABASE_URL);
  if (given) {
    project.provide("postgres", given);
    return async () => {};
  }
  const postgres = await startEmbeddedPostgres();
  project.provide("postgres", postgres.connection);
  return () => postgres.stop();
}
