import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import pg from "pg";
import { inject } from "vitest";

// Medusa's app test runner gives each test file a new database and runs every module's migrations
// and the link sync on it: about 8 CPU seconds a file, the same work every time. Here only the
// first file of a run does that work; once its migrations and link sync are done, its database is
// copied to this run's template (postgres.global-setup.ts names it). Each later file's database is
// created as a copy of the template, and for such a copy the runner's migration step and link-sync
// plan are left out (they would find nothing to do). Every file still gets a database of its own,
// dropped after it. The runner's pieces are replaced through their modules' exports (the runner
// calls them through its index's live bindings), in this file's process only; @medusajs/test-utils
// is pinned (2.21.2), so this follows its code as it is.

interface PostgresTemplateExports {
  createDatabase(options: { databaseName: string; errorIfExist?: boolean }): Promise<void>;
  createPostgresDatabaseTemplate(options: { databaseName: string; templateName: string }): Promise<void>;
}
interface AppLoader {
  getLinksExecutionPlanner(): Promise<{
    createPlan(): Promise<unknown[]>;
    executePlan(plan: unknown[]): Promise<unknown>;
  }>;
}
interface UseDbExports {
  migrateDatabase(appLoader: AppLoader): Promise<void>;
  syncLinks(appLoader: AppLoader, directory: string, container: unknown, logger: unknown): Promise<void>;
}

const require = createRequire(import.meta.url);
const runnerUtils = join(dirname(require.resolve("@medusajs/test-utils")), "medusa-test-runner-utils");
const postgresTemplate = runnerModule("postgres-template.js") as PostgresTemplateExports;
const useDb = runnerModule("use-db.js") as UseDbExports;
const template = inject("databaseTemplate");
// A runner whose pieces are not these (another version) leaves every file to migrate its database.
const runnerAsKnown = [
  postgresTemplate.createDatabase,
  postgresTemplate.createPostgresDatabaseTemplate,
  useDb.migrateDatabase,
  useDb.syncLinks,
].every((piece) => typeof piece === "function");
if (template && runnerAsKnown) {
  const postgres = inject("postgres");

  /** Databases created here as copies of the template. */
  const copies = new Set<string>();
  /** The database this file migrates to make the template, and the session holding the lock. */
  let making: { database: string; lock: pg.Client } | undefined;

  /** The database the runner configured Medusa with (required here: the runner has loaded it). */
  const runnerDatabase = () => {
    const { configManager } = require("@medusajs/framework/config") as {
      configManager: { config: { projectConfig: { databaseUrl?: string } } };
    };
    const url = configManager.config.projectConfig.databaseUrl;
    return url === undefined ? undefined : decodeURIComponent(new URL(url).pathname.slice(1));
  };
  const isCopy = () => copies.has(runnerDatabase() ?? "");
  const isMaking = () => making !== undefined && making.database === runnerDatabase();
  /** Ends the locking session: the next file waiting copies the template, or makes it. */
  const stopMaking = async () => {
    const lock = making?.lock;
    making = undefined;
    await lock?.end();
  };

  postgresTemplate.createDatabase = async ({ databaseName, errorIfExist = false }) => {
    const lock = new pg.Client({ ...postgres, database: "postgres" });
    await lock.connect();
    let keepLock = false;
    try {
      // Files take turns here (a session lock, so a crashed file lets go); the template exists once
      // complete (CREATE DATABASE ... TEMPLATE is atomic), so whoever finds none makes it.
      await lock.query("SELECT pg_advisory_lock(hashtext($1))", [template]);
      const found = await lock.query("SELECT 1 FROM pg_database WHERE datname = $1", [template]);
      const ready = found.rowCount === 1;
      const copy = ready ? ` TEMPLATE ${quoted(template)}` : "";
      await lock.query(`CREATE DATABASE ${quoted(databaseName)}${copy}`);
      if (ready) copies.add(databaseName);
      else {
        making = { database: databaseName, lock };
        keepLock = true;
      }
    } catch (error) {
      // As the runner's own: a database that exists already is used as it is (and migrated).
      if (errorIfExist || (error as { code?: string }).code !== "42P04") throw error;
    } finally {
      if (!keepLock) await lock.end();
    }
  };

  const migrateDatabase = useDb.migrateDatabase;
  useDb.migrateDatabase = async (appLoader) => {
    if (isCopy()) return;
    try {
      await migrateDatabase(appLoader);
    } catch (error) {
      if (isMaking()) await stopMaking();
      throw error;
    }
  };

  // The custom links are loaded either way (the app needs them); a copy leaves out only the plan.
  const syncLinks = useDb.syncLinks;
  const noPlan: AppLoader = {
    getLinksExecutionPlanner: async () => ({ createPlan: async () => [], executePlan: async () => {} }),
  };
  useDb.syncLinks = async (appLoader, directory, container, logger) => {
    if (isCopy()) return syncLinks(noPlan, directory, container, logger);
    const source = isMaking() ? making!.database : undefined;
    try {
      await syncLinks(appLoader, directory, container, logger);
      // The runner's own snapshot, as it takes before the first test (it closes the sessions on the
      // database, which Medusa's connection pool replaces).
      if (source) {
        await postgresTemplate.createPostgresDatabaseTemplate({
          databaseName: source,
          templateName: template,
        });
      }
    } finally {
      if (source) await stopMaking();
    }
  };
}

function runnerModule(file: string): unknown {
  try {
    return require(join(runnerUtils, file));
  } catch {
    return {};
  }
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
