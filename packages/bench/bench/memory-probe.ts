import { PurchaseAuthClient } from "@purchase-auth/core";
import { authorizationBody, type ShopCredentials } from "./wire.js";

// Child-process entry (node --expose-gc): runs sequential creates through our client and reports
// the heap after full collections. Its own process, so nothing else's allocations count.

export interface MemoryProbeInput {
  shop: ShopCredentials;
  warmup: number;
  operations: number;
  samples: number;
}

export interface MemoryProbeResult {
  operations: number;
  baselineHeapBytes: number;
  finalHeapBytes: number;
  growthBytes: number;
  /** Heap after a full GC at evenly spaced points, to tell a leak (a slope) from noise. */
  samples: Array<{ afterOperations: number; heapBytes: number }>;
  seconds: number;
}

const collect = globalThis.gc;
if (collect === undefined) throw new Error("run the memory probe with node --expose-gc");

function settledHeap(): number {
  // Two passes: the first can leave objects with finalizers for the second.
  collect!();
  collect!();
  return process.memoryUsage().heapUsed;
}

const input = JSON.parse(process.argv[2] ?? "{}") as MemoryProbeInput;
const client = new PurchaseAuthClient({
  baseUrl: input.shop.baseUrl,
  clientId: input.shop.clientId,
  clientSecret: input.shop.clientSecret,
  scope: input.shop.scope,
});
const request = authorizationBody(input.shop.customerToken);

for (let i = 0; i < input.warmup; i++) await client.authorizations.create(request);
const baselineHeapBytes = settledHeap();
const samples: MemoryProbeResult["samples"] = [];
const every = Math.ceil(input.operations / input.samples);
const t0 = performance.now();
for (let done = 1; done <= input.operations; done++) {
  await client.authorizations.create(request);
  if (done % every === 0 || done === input.operations)
    samples.push({ afterOperations: done, heapBytes: settledHeap() });
}
const seconds = (performance.now() - t0) / 1000;
await client.close();
const finalHeapBytes = settledHeap();
const result: MemoryProbeResult = {
  operations: input.operations,
  baselineHeapBytes,
  finalHeapBytes,
  growthBytes: finalHeapBytes - baselineHeapBytes,
  samples,
  seconds,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
