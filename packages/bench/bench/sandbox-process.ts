import { startSandbox } from "@purchase-auth/sandbox";
import { cpuMicrosOfThisProcess, serveRpc } from "./child-rpc.js";
import { BENCH_SANDBOX_OPTIONS, shopOf } from "./sandbox-host.js";

// Child-process entry: serves the sandbox on loopback and answers the parent's few control calls.

const sandbox = await startSandbox(BENCH_SANDBOX_OPTIONS);
serveRpc(sandbox.url, { openShop: () => shopOf(sandbox), cpuMicros: cpuMicrosOfThisProcess }, () =>
  sandbox.close(),
);
