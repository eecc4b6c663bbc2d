import { idempotencyKeyFor, PurchaseAuthClient } from "@purchase-auth/core";
import { MemoryChargeStore, purchaseAuth } from "@purchase-auth/express";
import { instantDispatcher } from "../instant-dispatcher.js";
import { rotate, runCell } from "../measure.js";
import { type PairedRatio, pairedRatio } from "../paired-ratio.js";
import { authorizationBody } from "../wire.js";

// Row 6's steady figure: what the adapter's bookkeeping costs per charge, in this process, with no
// network. The adapter's `router.charge()` (the route's own path from the order on: write-ahead
// record and key, order fingerprint, store writes, the answer applied by compare-and-set) against
// core's `authorizations.create` alone for the same order, both over a dispatcher that answers at
// once. Rounds alternate; CPU time of this process per charge. Over HTTP the same difference sits on
// top of Express and node:http, which is why row 6's ratio is what it is.

export interface BookkeepingSettings {
  concurrencies: readonly number[];
  rounds: number;
  operations: number;
  warmup: number;
}

export interface BookkeepingCell {
  concurrency: number;
  /** CPU µs per charge in each round. */
  adapterMicros: number[];
  bareMicros: number[];
  /** Pooled means, and adapter minus bare. */
  adapterMicrosPerCharge: number;
  bareMicrosPerCharge: number;
  extraMicrosPerCharge: number;
  ratio: PairedRatio;
}

const CUSTOMER_TOKEN = "5b0c3f1e-8d4a-4c6e-9f2b-7a1d3e5c9b80";
const CLIENT_OPTIONS = {
  baseUrl: "http://instant.invalid",
  clientId: "bench",
  clientSecret: "bench-secret",
  scope: "bench/.default",
} as const;

export async function measureExpressBookkeeping(settings: BookkeepingSettings): Promise<BookkeepingCell[]> {
  const dispatcher = instantDispatcher();
  const bareClient = new PurchaseAuthClient({ ...CLIENT_OPTIONS, dispatcher });
  const router = purchaseAuth({
    client: new PurchaseAuthClient({ ...CLIENT_OPTIONS, dispatcher }),
    store: new MemoryChargeStore(),
    webhookSecret: "bench-webhook-secret",
    reconcileIntervalMs: 0,
    resolveCustomer: () => null,
    buildOrder: () => {
      throw new Error("router.charge() builds no order");
    },
  });
  // The same order both ways (row 6's: one item, Auto, one synchronous attempt), a new reference each.
  const { order } = authorizationBody(CUSTOMER_TOKEN);
  let charges = 0;
  const bare = async () => {
    const reference = `bare-${charges++}`;
    const request = {
      customerToken: CUSTOMER_TOKEN,
      order: { ...order, reference },
      attemptSchedule: { preferSynchronous: true },
    };
    await bareClient.authorizations.create(request, {
      idempotencyKey: idempotencyKeyFor(reference, "authorize", 1),
    });
  };
  const adapter = async () => {
    const { charge } = await router.charge({
      customer: { customerId: "bench-customer", customerToken: CUSTOMER_TOKEN },
      order: { reference: `adapter-${charges++}`, currency: order.currency, items: order.items },
      timing: "now",
    });
    if (charge.status !== "captured") throw new Error(`adapter: charge ${charge.status}, expected captured`);
  };
  const cpuPerCharge = async (op: () => Promise<void>, concurrency: number) => {
    const before = process.cpuUsage();
    await runCell(op, { operations: settings.operations, concurrency });
    const used = process.cpuUsage(before);
    return (used.user + used.system) / settings.operations;
  };
  try {
    for (const op of [bare, adapter]) await runCell(op, { operations: settings.warmup, concurrency: 16 });
    const cells: BookkeepingCell[] = [];
    for (const concurrency of settings.concurrencies) {
      const adapterMicros: number[] = [];
      const bareMicros: number[] = [];
      for (let round = 0; round < settings.rounds; round++) {
        for (const variant of rotate(["adapter", "bare"] as const, round)) {
          if (variant === "adapter") adapterMicros.push(await cpuPerCharge(adapter, concurrency));
          else bareMicros.push(await cpuPerCharge(bare, concurrency));
        }
      }
      const adapterMicrosPerCharge = mean(adapterMicros);
      const bareMicrosPerCharge = mean(bareMicros);
      cells.push({
        concurrency,
        adapterMicros,
        bareMicros,
        adapterMicrosPerCharge,
        bareMicrosPerCharge,
        extraMicrosPerCharge: adapterMicrosPerCharge - bareMicrosPerCharge,
        ratio: pairedRatio(adapterMicros, bareMicros),
      });
    }
    return cells;
  } finally {
    await router.close();
    await bareClient.close();
  }
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
