import { cpuMicrosOfThisProcess, serveRpc } from "./child-rpc.js";
import { BENCH_SANDBOX_OPTIONS, shopOf } from "./sandbox-host.js";
import { TcpServedSandbox } from "./tcp-sandbox.js";

// Child-process entry: the bench's sandbox (the same options, stores of 20,000) served on the TCP
// floor's framing instead of node:http (tcp-sandbox.ts), a diagnostic of row 5.

const sandbox = await TcpServedSandbox.start(BENCH_SANDBOX_OPTIONS);
serveRpc(sandbox.url, { openShop: () => shopOf(sandbox), cpuMicros: cpuMicrosOfThisProcess }, () =>
  sandbox.close(),
);
