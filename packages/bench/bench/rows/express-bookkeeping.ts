import { setTimeout as delay } from "node:timers/promises";
import { idempotencyKeyFor, PurchaseAuthClient } from "@purchase-auth/core";
import { MemoryChargeStore, purchaseAuth } from "@purchase-auth/express";
import type { Dispatcher } from "undici";
import { instantDispatcher } from "../instant-dispatcher.js";
import { rotate, runCell } from "../measure.js";
import { type PairedRatio, pairedRatio } from "../paired-ratio.js";
import { authorizationBody } from "../wire.js";

// Row 6's in-process figure: what the adapter's bookkeeping costs per charge, with no network. The
// adapter's `router.charge()` (from the built order on, the `chargeOrder` path POST /charges takes:
// write-ahead record and key, order fingerprint, store writes, the answer applied by compare-and-set)
// against core's `authorizations.create` alone for the same order, both over a dispatcher that
// answers at once. Rounds alternate; CPU time of this process per charge.

export interface BookkeepingSettings {
  concurrencies: readonly number[];
  rounds: number;
  /** Measured charges per round and variant. */
  operations: number;
  /** Unmeasured charges of each variant at each concurrency before its first round (the JIT). */
  warmup: number;
  /** Unmeasured charges before each measured round, of the same variant (see `measureRound`). */
  settle: number;
}

export interface BookkeepingCell {
  concurrency: number;
  /** CPU µs per charge in each round. */
  adapterMicros: number[];
  bareMicros: number[];
  /** Pooled means. */
  adapterMicrosPerCharge: number;
  bareMicrosPerCharge: number;
  /** Adapter over bare, pooled, with its interval: the figure to judge a change by. */
  ratio: PairedRatio;
}

export const BOOKKEEPING_CUSTOMER_TOKEN = "5b0c3f1e-8d4a-4c6e-9f2b-7a1d3e5c9b80";
export const INSTANT_CLIENT_OPTIONS = {
  baseUrl: "http://instant.invalid",
  clientId: "bench",
  clientSecret: "bench-secret",
  scope: "bench/.default",
} as const;

interface Variant {
  /** Fresh state for a round (the adapter: a router on an empty store); returns the charge to repeat. */
  start(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export async function measureExpressBookkeeping(settings: BookkeepingSettings): Promise<BookkeepingCell[]> {
  const dispatcher = instantDispatcher();
  const variants = { adapter: adapterVariant(dispatcher), bare: bareVariant(dispatcher) };
  try {
    const cells: BookkeepingCell[] = [];
    for (const concurrency of settings.concurrencies) {
      // In round-sized pieces, each on a new store: one large store left behind would be collected
      // inside the first measured round.
      for (let done = 0; done < settings.warmup; done += settings.operations) {
        for (const variant of [variants.adapter, variants.bare]) {
          await runCell(await variant.start(), { operations: settings.operations, concurrency });
        }
      }
      const micros = { adapter: [] as number[], bare: [] as number[] };
      for (let round = 0; round < settings.rounds; round++) {
        for (const name of rotate(["adapter", "bare"] as const, round)) {
          micros[name].push(await measureRound(variants[name], settings, concurrency));
        }
      }
      cells.push({
        concurrency,
        adapterMicros: micros.adapter,
        bareMicros: micros.bare,
        adapterMicrosPerCharge: mean(micros.adapter),
        bareMicrosPerCharge: mean(micros.bare),
        ratio: pairedRatio(micros.adapter, micros.bare),
      });
    }
    return cells;
  } finally {
    await variants.adapter.close();
    await variants.bare.close();
  }
}

/**
 * One measured round: CPU µs per charge. `process.cpuUsage()` counts the garbage collector's
 * background threads too, so as little as possible of the other variant's garbage should be
 * collected inside this round: a pause, then `settle` unmeasured charges of this variant at this
 * concurrency, then the measured ones. Without them the core-alone rounds that followed an adapter
 * round cost 8–25% more than those that followed their own kind; with them 3–17%.
 */
async function measureRound(variant: Variant, settings: BookkeepingSettings, concurrency: number) {
  const charge = await variant.start();
  await delay(50);
  await runCell(charge, { operations: settings.settle, concurrency });
  const before = process.cpuUsage();
  await runCell(charge, { operations: settings.operations, concurrency });
  const used = process.cpuUsage(before);
  return (used.user + used.system) / settings.operations;
}

/** The same order both ways (row 6's: one item, Auto, one synchronous attempt), a new reference each. */
const { order } = authorizationBody(BOOKKEEPING_CUSTOMER_TOKEN);
let references = 0;

function bareVariant(dispatcher: Dispatcher): Variant {
  const client = new PurchaseAuthClient({ ...INSTANT_CLIENT_OPTIONS, dispatcher });
  const charge = async () => {
    const reference = `bare-${references++}`;
    const request = {
      customerToken: BOOKKEEPING_CUSTOMER_TOKEN,
      order: { ...order, reference },
      attemptSchedule: { preferSynchronous: true },
    };
    const result = await client.authorizations.create(request, {
      idempotencyKey: idempotencyKeyFor(reference, "authorize", 1),
    });
    if (!result.synchronous) throw new Error("core alone: the create was not answered at once");
  };
  return { start: async () => charge, close: () => client.close() };
}

/**
 * A new router on an empty store every round: a store that grew through the whole row measured
 * where its hash tables doubled (a round that crossed 32,768 charges cost twice the others), not
 * the route. So the figure is the bookkeeping of a store of a few thousand charges.
 */
function adapterVariant(dispatcher: Dispatcher): Variant {
  const client = new PurchaseAuthClient({ ...INSTANT_CLIENT_OPTIONS, dispatcher });
  let router: ReturnType<typeof purchaseAuth> | undefined;
  const charge = async () => {
    const { charge } = await router!.charge({
      customer: { customerId: "bench-customer", customerToken: BOOKKEEPING_CUSTOMER_TOKEN },
      order: { reference: `adapter-${references++}`, currency: order.currency, items: order.items },
      timing: "now",
    });
    if (charge.status !== "captured") throw new Error(`adapter: charge ${charge.status}, expected captured`);
  };
  return {
    start: async () => {
      await router?.close();
      router = purchaseAuth({
        client,
        store: new MemoryChargeStore(),
        webhookSecret: "bench-webhook-secret",
        reconcileIntervalMs: 0,
        resolveCustomer: () => null,
        buildOrder: () => {
          throw new Error("router.charge() builds no order");
        },
      });
      return charge;
    },
    close: async () => {
      await router?.close();
      await client.close();
    },
  };
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
