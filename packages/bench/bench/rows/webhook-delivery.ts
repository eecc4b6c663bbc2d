import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { forkRpcChild } from "../child-rpc.js";
import { median } from "../measure.js";

// Row 7: how fast the sandbox delivers webhooks to a slow receiver. The sandbox runs in a child
// process (webhook-process.ts) and queues a burst of events in one turn; the receiver here answers
// each POST after 25 ms. Deliveries per second = events / (burst → every delivery answered).

export const WEBHOOK_GOAL_PER_SEC = 500;

export interface WebhookDeliveryResult {
  events: number;
  rounds: number;
  receiverDelayMs: number;
  concurrency: number;
  /** Median over the rounds. */
  deliveriesPerSec: number;
  perRound: number[];
  /** concurrency / delay: what the receiver's delay allows at most. */
  ceilingPerSec: number;
  /** The most POSTs the receiver had open at once. */
  maxOpenAtReceiver: number;
  sandboxCpuPercent: number;
  /** Events that did not reach the receiver exactly once per round (must be 0). */
  missing: number;
}

export async function measureWebhookDelivery(settings: {
  events: number;
  rounds: number;
  receiverDelayMs: number;
  concurrency: number;
}): Promise<WebhookDeliveryResult> {
  const { events, rounds, receiverDelayMs, concurrency } = settings;
  const seen = new Set<string>();
  let open = 0;
  let maxOpen = 0;
  const receiver = createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const id = String(req.headers["service-webhook-id"]);
    req.resume();
    req.on("end", () =>
      setTimeout(() => {
        seen.add(id);
        open--;
        res.end();
      }, receiverDelayMs),
    );
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  const entry = fileURLToPath(new URL("../webhook-process.js", import.meta.url));
  const child = await forkRpcChild<"burst" | "settle" | "cpuMicros">(entry, {
    args: [url, String(events), String(concurrency)],
  });
  try {
    const perRound: number[] = [];
    const cpu: number[] = [];
    let missing = 0;
    // The first burst is the warm-up (connections, JIT); it is checked but not timed.
    for (let round = 0; round <= rounds; round++) {
      seen.clear();
      const cpuBefore = await child.call<number>("cpuMicros");
      const t0 = performance.now();
      await child.call("burst");
      const outcomes = await child.call<Record<string, number>>("settle");
      const seconds = (performance.now() - t0) / 1000;
      const cpuSeconds = ((await child.call<number>("cpuMicros")) - cpuBefore) / 1e6;
      if (outcomes.delivered !== events || seen.size !== events) {
        missing += events - Math.min(seen.size, outcomes.delivered ?? 0);
      }
      if (round === 0) continue;
      perRound.push(events / seconds);
      cpu.push((cpuSeconds / seconds) * 100);
    }
    return {
      events,
      rounds,
      receiverDelayMs,
      concurrency,
      deliveriesPerSec: median(perRound),
      perRound,
      ceilingPerSec: concurrency / (receiverDelayMs / 1000),
      maxOpenAtReceiver: maxOpen,
      sandboxCpuPercent: median(cpu),
      missing,
    };
  } finally {
    await child.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
