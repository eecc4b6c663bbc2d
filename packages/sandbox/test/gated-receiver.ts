import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A real webhook receiver that can hold its answers, to see how many deliveries the sandbox has in
// flight at once. It counts a request as open from its arrival to the end of its answer, which is
// never longer than the sandbox counts it in flight, so `maxOpen` can only under-count.

export interface GatedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface GatedReceiver {
  url: string;
  /** Every event received, in arrival order (copies and redeliveries included). */
  received: GatedEvent[];
  /** Requests received and not answered yet. */
  readonly open: number;
  /** The most requests ever open at once. */
  readonly maxOpen: number;
  /** Events of the requests open now. */
  openEvents(): GatedEvent[];
  /** Resolves once `count` requests are open at the same time. */
  whenOpen(count: number): Promise<void>;
  /** Answers the held requests and every later one at once (with the statuses of `failNext`, then 200). */
  release(): void;
  /** Status to answer the next requests with, consumed one per answer (then 200). */
  failNext(...statuses: number[]): void;
  close(): Promise<void>;
}

/** Starts holding every answer until `release()`; `held: false` answers at once from the start. */
export async function startGatedReceiver(options: { held?: boolean } = {}): Promise<GatedReceiver> {
  const received: GatedEvent[] = [];
  const statuses: number[] = [];
  const waiting: Array<{ event: GatedEvent; res: ServerResponse }> = [];
  const openWaiters: Array<{ count: number; resolve: () => void }> = [];
  let held = options.held ?? true;
  let open = 0;
  let maxOpen = 0;

  const answer = (res: ServerResponse) => {
    res.statusCode = statuses.shift() ?? 200;
    res.end();
  };
  const server = createServer((req, res) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    res.once("finish", () => open--);
    res.once("close", () => {
      const index = waiting.findIndex((entry) => entry.res === res);
      if (index >= 0) waiting.splice(index, 1);
    });
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as GatedEvent;
      received.push(event);
      if (!held) return answer(res);
      waiting.push({ event, res });
      for (const waiter of openWaiters.filter((entry) => waiting.length >= entry.count)) {
        openWaiters.splice(openWaiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    get open() {
      return open;
    },
    get maxOpen() {
      return maxOpen;
    },
    openEvents: () => waiting.map((entry) => entry.event),
    whenOpen: (count) =>
      waiting.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve) => openWaiters.push({ count, resolve })),
    release: () => {
      held = false;
      for (const entry of waiting.splice(0)) answer(entry.res);
    },
    failNext: (...next) => statuses.push(...next),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
