import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { request } from "undici";

// Real processes for the crash test: the sandbox from its CLI, the shop from shop-process.mjs, each
// a child the test can SIGKILL; and the sandbox's control routes over HTTP, since it is not in this
// process.

const SANDBOX_CLI = fileURLToPath(new URL("../../../sandbox/dist/cli.js", import.meta.url));
const SHOP_PROCESS = fileURLToPath(new URL("./shop-process.mjs", import.meta.url));

/** A port nobody listens on now (the shop must come back on the same one after each kill). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves once the child printed `marker` on stdout; rejects if it exits first. */
async function started(child: ChildProcess, marker: string, timeoutMs = 20_000): Promise<string> {
  let output = "";
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    errors += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no "${marker}" within ${timeoutMs} ms: ${errors}`)),
      timeoutMs,
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(marker)) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code ?? signal}) before "${marker}": ${errors}`));
    });
  });
}

export interface SandboxProcess {
  url: string;
  control<T = unknown>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T>;
  kill(): void;
}

export async function startSandboxProcess(): Promise<SandboxProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [SANDBOX_CLI, "--port", String(port), "--no-demo", "--seed", "7"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  await started(child, "listening on");
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async control<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
      const response = await request(`${url}${path}`, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      });
      const text = await response.body.text();
      if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${text}`);
      return (text === "" ? undefined : JSON.parse(text)) as T;
    },
    kill: () => child.kill("SIGKILL"),
  };
}

export interface ShopProcess {
  url: string;
  /** SIGKILLs the running shop (if any) and waits until it is gone. */
  kill(): Promise<void>;
  /** Starts the shop again on the same port. */
  start(): Promise<void>;
  /** How many times it was killed. */
  readonly kills: number;
  /** True from the moment it is ready until it is killed. */
  readonly up: boolean;
  /** The alerts (`onAlert`) its runs printed, one `alert {json}` line each. */
  readonly alerts: readonly unknown[];
}

export function shopProcess(port: number, env: Record<string, string>): ShopProcess {
  let child: ChildProcess | undefined;
  let kills = 0;
  let up = false;
  const alerts: unknown[] = [];
  return {
    url: `http://127.0.0.1:${port}`,
    get kills() {
      return kills;
    },
    get up() {
      return up;
    },
    alerts,
    async start() {
      child = spawn(process.execPath, [SHOP_PROCESS], {
        env: { ...process.env, ...env, PORT: String(port) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      readAlerts(child, alerts);
      await started(child, "ready");
      up = true;
    },
    async kill() {
      const running = child;
      child = undefined;
      up = false;
      if (running === undefined || running.exitCode !== null) return;
      const exited = once(running, "exit");
      running.kill("SIGKILL");
      await exited;
      kills++;
    },
  };
}

/** Collects the child's `alert {json}` lines into `alerts` (a line cut by a SIGKILL is dropped). */
function readAlerts(child: ChildProcess, alerts: unknown[]): void {
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    const lines = (pending + chunk.toString()).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("alert ")) alerts.push(JSON.parse(line.slice(6)));
  });
}
