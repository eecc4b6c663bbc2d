import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject, onTestFinished } from "vitest";
import type { RunBatchResult } from "../../src/index.js";
import type { Shop } from "./sandbox.js";

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The --json report, when the run printed one. */
  report?: RunBatchResult;
}

/** A file in a fresh temporary folder, removed when the test that asked for it ends. */
export function tempFile(name: string, content: string): string {
  const folder = mkdtempSync(join(tmpdir(), "purchase-auth-batch-"));
  onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
  const path = join(folder, name);
  writeFileSync(path, content);
  return path;
}

/** The environment that points the CLI at `shop`'s merchant (the secret only in the environment). */
export function shopEnv(shop: Shop): NodeJS.ProcessEnv {
  return {
    PURCHASE_AUTH_BASE_URL: shop.credentials.baseUrl,
    PURCHASE_AUTH_CLIENT_ID: shop.credentials.clientId,
    PURCHASE_AUTH_CLIENT_SECRET: shop.credentials.clientSecret,
    PURCHASE_AUTH_SCOPE: shop.credentials.scope,
  };
}

/** Runs the CLI (bundled from src by the global setup) in a child process, to its end. */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return spawnCli(args, env).done;
}

/** Starts the CLI in a child process; `kill` sends it a signal (the crash test's SIGKILL). */
export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { done: Promise<CliRun>; kill(signal: NodeJS.Signals): void } {
  const child = spawn(process.execPath, [inject("cliPath"), ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      let report: RunBatchResult | undefined;
      try {
        report = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as RunBatchResult;
      } catch {
        report = undefined;
      }
      resolve({ code, signal, stdout, stderr, ...(report === undefined ? {} : { report }) });
    });
  });
  return { done, kill: (signal) => child.kill(signal) };
}
