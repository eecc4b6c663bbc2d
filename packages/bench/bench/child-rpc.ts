import { fork } from "node:child_process";
import type { AddressInfo, Server } from "node:net";

// A child process that serves something on loopback (the sandbox, an Express app) and answers a few
// control calls from the benchmark over IPC: its URL once ready, its CPU time, its close.

/** Messages of the tiny RPC between the benchmark and a child. */
export type RpcRequest<Method extends string = string> = { id: number; method: Method };
export type RpcReply = { id: number; result?: unknown; error?: string } | { ready: string };

export interface RpcChild<Method extends string> {
  /** What the child reported when it was ready (its URL). */
  readonly ready: string;
  call<T>(method: Method): Promise<T>;
  /** Calls "close" and waits until the process has exited. */
  close(): Promise<void>;
}

/**
 * `BENCH_CPU_PROF=<dir>` profiles every child (`--cpu-prof`): one `.cpuprofile` per process in
 * `<dir>`, written when the child exits at the end of its row.
 */
const profiling = process.env.BENCH_CPU_PROF
  ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
  : [];

/** Forks `entry` (with `args`) and waits for its `{ ready }` message. */
export async function forkRpcChild<Method extends string>(
  entry: string,
  options: { args?: string[]; execArgv?: string[] } = {},
): Promise<RpcChild<Method | "close">> {
  const child = fork(entry, options.args ?? [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv: [...(options.execArgv ?? []), ...profiling],
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let exitedEarly: ((code: number | null) => void) | undefined;

  const ready = await new Promise<string>((resolve, reject) => {
    child.once("error", reject);
    exitedEarly = (code) => reject(new Error(`${entry} exited early (${code})`));
    child.once("exit", exitedEarly);
    child.on("message", (message: RpcReply) => {
      if ("ready" in message) return resolve(message.ready);
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(message.error));
      else waiter?.resolve(message.result);
    });
  });

  // A child that dies (killed, crashed) fails its calls instead of leaving them unanswered forever.
  const gone = () => child.exitCode !== null || child.signalCode !== null || !child.connected;
  const failPending = () => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${entry} is gone`));
    pending.clear();
  };
  child.on("exit", failPending);
  child.on("disconnect", failPending);

  const call = <T>(method: Method | "close"): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (gone()) {
        reject(new Error(`${entry} is gone`));
        return;
      }
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, method } satisfies RpcRequest, (error) => {
        if (error === null || error === undefined) return;
        pending.delete(id);
        reject(error);
      });
    });

  return {
    ready,
    call,
    close: async () => {
      if (exitedEarly !== undefined) child.off("exit", exitedEarly); // the start's, long settled
      if (child.exitCode !== null || child.signalCode !== null) return; // already gone
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      await call("close").catch(() => child.kill());
      await exited;
    },
  };
}

/**
 * The child's side: reports `ready`, answers `methods`, and on "close" (or when the parent goes
 * away without saying goodbye) runs `close` and leaves.
 */
export function serveRpc(
  ready: string,
  methods: Record<string, () => unknown>,
  close: () => Promise<void>,
): void {
  const send = (reply: RpcReply) => process.send?.(reply);
  let closing: Promise<void> | undefined;
  const closeOnce = () => {
    closing ??= close();
    return closing;
  };
  process.on("message", async (message: RpcRequest) => {
    try {
      if (message.method === "close") {
        await closeOnce();
        send({ id: message.id, result: null });
        process.disconnect();
        return;
      }
      const method = methods[message.method];
      if (method === undefined) throw new Error(`unknown method ${message.method}`);
      send({ id: message.id, result: await method() });
    } catch (error) {
      send({ id: message.id, error: error instanceof Error ? error.message : String(error) });
    }
  });
  process.on("disconnect", () => void closeOnce().finally(() => process.exit(0)));
  send({ ready });
}

/** CPU time this process has used so far, in microseconds (user + system). */
export function cpuMicrosOfThisProcess(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/**
 * A floor's child side: `server` (node:http's or node:net's) listens on a free loopback port, and the
 * RPC reports its URL, answers `cpuMicros`, and on "close" ends its connections, then the server.
 */
export async function serveFloor(server: Server, endConnections: () => void): Promise<void> {
  serveRpc(await listenOnLoopback(server), { cpuMicros: cpuMicrosOfThisProcess }, async () => {
    endConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}

/** Listens on a free loopback port; resolves with the server's base URL, rejects when it cannot. */
export function listenOnLoopback(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    });
  });
}
