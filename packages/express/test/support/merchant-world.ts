import type { FaultSpec } from "@purchase-auth/sandbox";
import { afterEach, expect } from "vitest";
import { type ChargeStore, MemoryChargeStore } from "../../src/index.js";
import type { PaymentAlert } from "../../src/reconcile/alerts.js";
import { freshSchema, postgresStore } from "./database.js";
import { type RecordedWrite, recordingClient } from "./recording-client.js";
import { call, charge, createShopData, type ShopApp, staffOnly, startShopApp, useShops } from "./shop.js";

// One set-up for the tests of merchant writes and the reconciler: a manual-capture charge of 49.80
// on `instances` instances of a shop sharing one store (memory, or PostgreSQL with a pool each),
// the sandbox's clock, the reconciler only on call, no webhooks. Each instance's client records
// its order writes; instance 0's may be held before it is sent.

export type StoreKind = "memory" | "postgres";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
/** The router's default resendWindowMs and timeoutMs. */
export const WINDOW = 55 * MINUTE;
export const TIMEOUT = 20_000;

/** An order write reached the service and moved the money; its answer never came back. */
export const ANSWER_LOST: FaultSpec = {
  kind: "drop_after_commit",
  match: { method: "POST", path: "/manage/orders" },
  count: null,
};
/** An order write never reached the service: nothing moved. */
export const NEVER_ARRIVED: FaultSpec = {
  kind: "reset_before_processing",
  match: { method: "POST", path: "/manage/orders" },
  count: null,
};
/** Every read of an order fails. */
export const ORDER_READ_FAILS: FaultSpec = {
  kind: "unavailable",
  match: { method: "GET", path: "/manage/orders" },
  count: null,
};

/**
 * The sandbox for a test file, and the closers its worlds register: after each test the faults are
 * cleared and every world is closed, last opened first.
 */
export function useMerchantWorlds() {
  const shops = useShops();
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    shops.sandbox().clearFaults();
    for (const close of closers.splice(0).reverse()) await close();
  });
  return { shops, closers };
}

export interface WorldOptions {
  instances?: number;
  /** Runs before each of instance 0's order writes is sent: a test may hold it there. */
  holdWrite?: (write: RecordedWrite) => Promise<void> | void;
  /** Wraps the store instance `index` uses (a test's view of it with hooks, say). */
  wrapStore?: (store: ChargeStore, index: number) => ChargeStore;
}

/** Stores for `instances` instances of one shop: one memory store shared, or a pool and store each on one database. */
async function storesFor(
  kind: StoreKind,
  instances: number,
  closers: Array<() => Promise<void>>,
): Promise<ChargeStore[]> {
  if (kind === "memory") return Array(instances).fill(new MemoryChargeStore());
  const database = await freshSchema();
  closers.push(() => database.drop());
  return Promise.all(Array.from({ length: instances }, () => postgresStore(database.newPool())));
}

export async function merchantWorld(
  shops: ReturnType<typeof useShops>,
  kind: StoreKind,
  closers: Array<() => Promise<void>>,
  { instances = 1, holdWrite, wrapStore }: WorldOptions = {},
) {
  const sandbox = shops.sandbox();
  const data = createShopData(sandbox);
  const stores = await storesFor(kind, instances, closers);
  const alerts: PaymentAlert[] = [];
  const apps: ShopApp[] = [];
  const recorders: Array<ReturnType<typeof recordingClient>> = [];
  for (const [index, store] of stores.entries()) {
    const recorder = recordingClient(
      data,
      { retryBaseDelayMs: 5, retryMaxDelayMs: 50, maxRetries: 1 },
      index === 0 ? holdWrite : undefined,
    );
    closers.push(() => recorder.close());
    const app = await startShopApp(data, {
      store: wrapStore === undefined ? store : wrapStore(store, index),
      client: recorder.client,
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      authorizeMerchant: staffOnly,
      captureMode: "Manual",
      now: () => sandbox.now(),
      onAlert: (alert) => {
        alerts.push(alert);
      },
    });
    closers.push(() => app.close());
    apps.push(app);
    recorders.push(recorder);
  }
  const customer = data.customer();
  const cartId = data.cart(customer);
  const paid = await charge(apps[0]!, customer, { cartId });
  expect(paid.json.status).toBe("authorized");
  const id: string = paid.json.authorizationId;
  const press = (operation: string, body: unknown, instance = 0) =>
    call(apps[instance]!, "POST", `/charges/${id}/${operation}`, { merchant: true, body });
  const order = () => sandbox.orders({ authorizationId: id })[0]!;
  /** The amounts of the order's operations of `type` at the sandbox. */
  const moves = (type: string) =>
    order()
      .operations.filter((operation) => operation.type === type)
      .map((operation) => operation.amount);
  const reference = data.referenceOf(cartId);
  const stored = () => stores[0]!.findByReference(reference);
  const entry = async (key: string) => (await stored())?.operationLog?.[key];
  return { sandbox, data, stores, apps, recorders, alerts, press, order, moves, stored, entry, reference };
}

export type MerchantWorld = Awaited<ReturnType<typeof merchantWorld>>;

/** Holds instance 0's next order write, once armed, until released. */
export function holder() {
  let entered: () => void = () => undefined;
  const sending = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let armed = false;
  return {
    arm: () => {
      armed = true;
    },
    hold: async () => {
      if (!armed) return;
      armed = false;
      entered();
      await held;
    },
    sending,
    release: () => release(),
  };
}
