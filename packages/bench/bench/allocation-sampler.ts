import { Session } from "node:inspector/promises";

// Bytes a process allocates on the V8 heap, collected objects included, from V8's sampling heap
// profiler over the inspector. Unlike CPU time it does not move with the machine's load: the
// garbage collector's work follows it, so it is the steady figure to compare two apps by.

/** One sample per this many bytes allocated on average (V8's default is 32 KiB). */
const SAMPLING_INTERVAL = 512;

export class AllocationSampler {
  #session: Session | undefined;

  async start(): Promise<null> {
    if (this.#session !== undefined) throw new Error("allocation sampling is already on");
    const session = new Session();
    session.connect();
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: SAMPLING_INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    this.#session = session;
    return null;
  }

  /** Stops sampling; the bytes allocated since `start`, as the samples estimate them. */
  async stop(): Promise<number> {
    const session = this.#session;
    if (session === undefined) throw new Error("allocation sampling is not on");
    this.#session = undefined;
    const { profile } = await session.post("HeapProfiler.stopSampling");
    session.disconnect();
    return totalSelfSize(profile.head);
  }
}

interface SamplingNode {
  selfSize: number;
  children: SamplingNode[];
}

function totalSelfSize(root: SamplingNode): number {
  let total = 0;
  const pending = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    total += node.selfSize;
    pending.push(...node.children);
  }
  return total;
}
