import { startSandbox } from "@purchase-auth/sandbox";
import { cpuMicrosOfThisProcess, serveRpc } from "./child-rpc.js";
import { ownWorkMicrosPerCreate } from "./own-work.js";
import { BENCH_SANDBOX_OPTIONS, OWN_WORK, shopOf } from "./sandbox-host.js";

// Child-process entry: serves the sandbox on loopback and answers the parent's few control calls.
// `--stored=N` bounds its stores at N objects and N keys instead of the bench's usual sizes.

const stored = process.argv.find((arg) => arg.startsWith("--stored="))?.slice("--stored=".length);
const sandbox = await startSandbox(
  stored === undefined
    ? BENCH_SANDBOX_OPTIONS
    : { ...BENCH_SANDBOX_OPTIONS, maxStoredObjects: Number(stored), maxIdempotencyKeys: Number(stored) },
);
serveRpc(
  sandbox.url,
  {
    openShop: () => shopOf(sandbox),
    cpuMicros: cpuMicrosOfThisProcess,
    ownWorkMicros: () => ownWorkMicrosPerCreate(sandbox, OWN_WORK),
  },
  () => sandbox.close(),
);
