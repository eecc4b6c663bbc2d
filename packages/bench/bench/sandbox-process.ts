import { startSandbox } from "@purchase-auth/sandbox";
import {
  BENCH_SANDBOX_OPTIONS,
  type SandboxRpcReply,
  type SandboxRpcRequest,
  shopOf,
} from "./sandbox-host.js";

// Child-process entry: serves the sandbox on loopback and answers the parent's few control calls.

const sandbox = await startSandbox(BENCH_SANDBOX_OPTIONS);
const send = (reply: SandboxRpcReply) => process.send?.(reply);

process.on("message", async (message: SandboxRpcRequest) => {
  try {
    switch (message.method) {
      case "openShop":
        return send({ id: message.id, result: shopOf(sandbox) });
      case "cpuMicros": {
        const usage = process.cpuUsage();
        return send({ id: message.id, result: usage.user + usage.system });
      }
      case "close":
        await sandbox.close();
        send({ id: message.id, result: null });
        process.disconnect();
        return;
    }
  } catch (error) {
    send({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
});
// The parent went away without saying goodbye: do not linger.
process.on("disconnect", () => void sandbox.close().then(() => process.exit(0)));
send({ ready: sandbox.url });
