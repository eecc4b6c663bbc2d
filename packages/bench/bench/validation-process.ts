import { startSandbox } from "@purchase-auth/sandbox";
import { serveRpc } from "./child-rpc.js";
import { BENCH_SANDBOX_OPTIONS, shopOf } from "./sandbox-host.js";

// Child-process entry of the pathological-body row: a fresh sandbox of its own, so its peak memory
// (the high-water mark of its resident set) shows what those requests cost and nothing else.

const sandbox = await startSandbox(BENCH_SANDBOX_OPTIONS);
serveRpc(
  sandbox.url,
  {
    openShop: () => shopOf(sandbox),
    /** Resident set now and its high-water mark since the start, in bytes. */
    memory: () => ({
      rssBytes: process.memoryUsage.rss(),
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
    }),
  },
  () => sandbox.close(),
);
