import type { AddressInfo } from "node:net";
import { AllocationSampler } from "./allocation-sampler.js";
import { cpuMicrosOfThisProcess, serveRpc } from "./child-rpc.js";
import { EXPRESS_APPS, type ExpressVariantName } from "./express-apps.js";
import type { ShopCredentials } from "./wire.js";

// Child-process entry (node --expose-gc): one Express app of row 6 on loopback, in a process of its
// own like the sandbox, so its CPU per request is measured apart from the load generator's and the
// other app's heap (the adapter's in-memory store grows with every charge) is not in its way.

export interface ExpressProcessInput {
  variant: ExpressVariantName;
  shop: ShopCredentials;
}

export type ExpressProcessMethod =
  | "cpuMicros"
  | "heapAfterGc"
  | "charges"
  | "startAllocationSampling"
  | "stopAllocationSampling";

const input = JSON.parse(process.argv[2] ?? "{}") as ExpressProcessInput;
const variant = EXPRESS_APPS[input.variant](input.shop);
const server = variant.app.listen(0, "127.0.0.1");
await new Promise<void>((resolve, reject) => {
  server.once("listening", resolve);
  server.once("error", reject);
});
const { port } = server.address() as AddressInfo;
const allocations = new AllocationSampler();

serveRpc(
  `http://127.0.0.1:${port}`,
  {
    cpuMicros: cpuMicrosOfThisProcess,
    heapAfterGc: () => {
      globalThis.gc?.();
      globalThis.gc?.();
      return process.memoryUsage().heapUsed;
    },
    charges: () => variant.charges(),
    startAllocationSampling: () => allocations.start(),
    stopAllocationSampling: () => allocations.stop(),
  } satisfies Record<ExpressProcessMethod, () => unknown>,
  async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await variant.close();
  },
);
