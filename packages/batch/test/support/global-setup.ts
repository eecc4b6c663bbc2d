import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { startTestPostgres } from "purchase-auth-test-postgres";
import type { TestProject } from "vitest/node";

// One PostgreSQL server for the project (DATABASE_URL's, or an embedded one) and the CLI bundled
// from src, so the CLI and crash tests run the code under test in a child process without a
// `pnpm build` of this package first. Dependencies stay external: they load from node_modules.

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    cliPath: string;
  }
}

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cliPath = join(packageDir, "node_modules", ".cache", "purchase-auth-batch-test", "cli.js");
  mkdirSync(dirname(cliPath), { recursive: true });
  await build({
    entryPoints: [join(packageDir, "src", "cli", "main.ts")],
    outfile: cliPath,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    sourcemap: "inline",
    logLevel: "silent",
  });
  const postgres = await startTestPostgres();
  project.provide("databaseUrl", postgres.url);
  project.provide("cliPath", cliPath);
  return () => postgres.stop();
}
