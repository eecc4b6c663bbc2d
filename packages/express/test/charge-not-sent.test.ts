import {
  type AuthorizationRequest,
  PurchaseAuthClient,
  ServiceUnavailableError,
  type WriteOptions,
} from "@purchase-auth/core";
import { afterEach, describe, expect, it } from "vitest";
import { type ChargeRecord, type ChargeStore, MemoryChargeStore } from "../src/index.js";
import { freshSchema, postgresStore } from "./support/database.js";
import {
  type AppOptions,
  charge,
  createShopData,
  type ShopData,
  startShopApp,
  useShops,
} from "./support/shop.js";

// A charge's create call that never reached the service (core: `not_sent`, the token endpoint down;
// or `refused`, 429 on every try) is answered "nothing happened, try again": the charge must then
// really be over. It fails (SERVICE_UNAVAILABLE) in the same stored change that counts that send,
// the reconciler never sends it, and the shopper's retry is a new attempt. While another send of
// the same key may have reached the service (another instance's, the reconciler's) the charge stays
// pending and the send that did nothing is answered "confirming", never "nothing happened".

const shops = useShops();
const { shop } = shops;
afterEach(() => shops.sandbox().clearFaults());

const databases: Array<Awaited<ReturnType<typeof freshSchema>>> = [];
afterEach(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
});

/** `count` views of one store: one memory store shared, or one database with a pool per instance. */
async function storesOf(kind: "memory" | "postgres", count: number): Promise<ChargeStore[]> {
  if (kind === "memory") return Array.from<ChargeStore>({ length: count }).fill(new MemoryChargeStore());
  const database = await freshSchema();
  databases.push(database);
  return Promise.all(Array.from({ length: count }, () => postgresStore(database.newPool())));
}

const QUIET: AppOptions = {
  receiveWebhooks: false,
  reconcileIntervalMs: 0,
  clientOptions: { maxRetries: 1 },
};

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/**
 * A client whose create calls wait at a gate (`entered` once one is there, `release()` to let it
 * go), then either never leave (core's `not_sent`) or go to the sandbox; `not_sent_once`: the first
 * never leaves, later ones go. Its options are recorded.
 */
function gatedClient(data: ShopData, fate: "not_sent" | "sent" | "not_sent_once") {
  const real = new PurchaseAuthClient({
    baseUrl: data.sandbox.url,
    clientId: data.merchant.clientId,
    clientSecret: data.merchant.clientSecret,
    scope: data.merchant.scope,
    maxRetries: 1,
  });
  const entered = deferred();
  const gate = deferred();
  const sends: Array<WriteOptions | undefined> = [];
  const client = {
    authorizations: {
      create: async (request: AuthorizationRequest, options?: WriteOptions) => {
        sends.push(options);
        entered.resolve();
        await gate.promise;
        if (fate === "sent" || (fate === "not_sent_once" && sends.length > 1)) {
          return real.authorizations.create(request, options);
        }
        throw new ServiceUnavailableError(
          "Create authorization: the service could not be reached (the token endpoint is down); nothing was charged or changed, try again later",
          { outcome: "not_sent" },
        );
      },
    },
    orders: real.orders,
    verifyWebhook: real.verifyWebhook.bind(real),
  } as unknown as PurchaseAuthClient;
  return { client, sends, entered: entered.promise, release: gate.resolve, close: () => real.close() };
}

/**
 * `store` with its next `create` held once armed (`holdNextCreate()`): the store answers it, then
 * the answer waits until `release()`. `read` resolves with the charge that create read.
 */
function heldCreates(store: ChargeStore) {
  let armed: { read: (charge: ChargeRecord) => void; gate: Promise<void> } | undefined;
  const create: ChargeStore["create"] = async (record) => {
    const hold = armed;
    armed = undefined;
    const result = await store.create(record);
    if (hold !== undefined) {
      hold.read(result.charge);
      await hold.gate;
    }
    return result;
  };
  const view = new Proxy(store, {
    get(target, property) {
      if (property === "create") return create;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const holdNextCreate = () => {
    const gate = deferred();
    let read: (charge: ChargeRecord) => void = () => undefined;
    const charge = new Promise<ChargeRecord>((done) => {
      read = done;
    });
    armed = { read, gate: gate.promise };
    return { read: charge, release: gate.resolve };
  };
  return { store: view, holdNextCreate };
}

for (const kind of ["memory", "postgres"] as const) {
  describe(`a create call that reached nothing (${kind} store)`, () => {
    it("token endpoint down on the first send: 503 service-unavailable, the charge fails, the reconciler never sends it, and the retry is a new attempt", async () => {
      const [store] = await storesOf(kind, 1);
      const { data, app } = await shop({ ...QUIET, store });
      const customer = data.customer();
      const cartId = data.cart(customer);
      const reference = data.referenceOf(cartId);
      data.sandbox.injectFault({ kind: "token_endpoint_down", count: null });
      const first = await charge(app, customer, { cartId });
      data.sandbox.clearFaults();
      expect(first.status).toBe(503);
      expect(first.json).toMatchObject({ type: "urn:purchase-auth:problem:service-unavailable" });
      expect(await store!.findByReference(reference)).toMatchObject({
        status: "failed",
        reason: "SERVICE_UNAVAILABLE",
        attempt: 1,
        pendingAuthorization: { sends: 1, undelivered: 1 },
      });

      // The shopper was told nothing happened: the reconciler must not charge behind their back.
      const report = await app.router.reconcile();
      expect(report).toMatchObject({ examined: 0, resolved: 0 });
      expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toEqual([]);

      // Their retry is a new attempt (a new key), charged once.
      const again = await charge(app, customer, { cartId });
      expect(again.status).toBe(201);
      expect(again.json).toMatchObject({ status: "captured" });
      expect(await store!.findByReference(reference)).toMatchObject({ status: "captured", attempt: 2 });
      expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
      await app.router.reconcile();
      expect(data.sandbox.orders({ merchantId: data.merchant.merchantId })).toHaveLength(1);
    });

    it("router.charge() rate-limited on every try: ServiceUnavailableError, the charge fails and is never sent by the reconciler; calling again charges once", async () => {
      const [store] = await storesOf(kind, 1);
      const { data, app } = await shop({ ...QUIET, store });
      const customer = data.customer();
      const order = {
        reference: `renewal-${Math.random().toString(36).slice(2, 10)}`,
        currency: "EUR",
        items: [{ id: "sub", description: "Subscription", unitPrice: "10.00", quantity: 1, vat: 0 }],
      };
      const who = { customerId: customer.customerId, customerToken: customer.customerToken };
      data.sandbox.injectFault({
        kind: "rate_limited",
        retryAfterSeconds: 0,
        count: null,
        match: { method: "POST", path: "/purchase/authorizations" },
      });
      const error = await app.router.charge({ customer: who, order }).catch((thrown: unknown) => thrown);
      data.sandbox.clearFaults();
      expect(ServiceUnavailableError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ outcome: "refused", retry: "new-attempt" });
      expect(await store!.findByReference(order.reference)).toMatchObject({
        status: "failed",
        reason: "SERVICE_UNAVAILABLE",
      });

      await app.router.reconcile();
      expect(data.sandbox.orders({ merchantId: data.merchant.merchantId })).toEqual([]);

      const again = await app.router.charge({ customer: who, order });
      expect(again).toMatchObject({ started: true, charge: { status: "captured" } });
      await app.router.reconcile();
      expect(data.sandbox.orders({ merchantId: data.merchant.merchantId })).toHaveLength(1);
    });

    it("a repeated POST that read the charge pending while the first POST's send reached nothing: 503 service-unavailable as the first, and the next POST is the new attempt", async () => {
      const [stored] = await storesOf(kind, 1);
      const held = heldCreates(stored!);
      const data = createShopData(shops.sandbox());
      // The first create call waits at the gate, then never leaves; later ones reach the service.
      const gated = gatedClient(data, "not_sent_once");
      const app = await startShopApp(data, { ...QUIET, store: held.store, client: gated.client });
      let repeat: ReturnType<typeof held.holdNextCreate> | undefined;
      try {
        const customer = data.customer();
        const cartId = data.cart(customer);
        const reference = data.referenceOf(cartId);
        const paying = charge(app, customer, { cartId });
        await gated.entered;
        // The shopper repeats the POST: it reads the charge while its first send is under way.
        repeat = held.holdNextCreate();
        const repeating = charge(app, customer, { cartId });
        expect(await repeat.read).toMatchObject({ status: "pending", attempt: 1 });

        // The first send reaches nothing: the charge fails, and the first POST is told so.
        gated.release();
        const first = await paying;
        expect(first.status).toBe(503);
        expect(first.json).toMatchObject({ type: "urn:purchase-auth:problem:service-unavailable" });
        expect(await stored!.findByReference(reference)).toMatchObject({
          status: "failed",
          reason: "SERVICE_UNAVAILABLE",
          attempt: 1,
        });

        // The repeat, which read the attempt unanswered, is answered the same: never "failed".
        repeat.release();
        const second = await repeating;
        expect(second.status).toBe(503);
        expect(second.json).toMatchObject({ type: "urn:purchase-auth:problem:service-unavailable" });
        expect(gated.sends).toHaveLength(1);
        expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toEqual([]);

        // The shopper's next POST starts the new attempt, charged once.
        const third = await charge(app, customer, { cartId });
        expect(third.status).toBe(201);
        expect(third.json).toMatchObject({ status: "captured" });
        expect(await stored!.findByReference(reference)).toMatchObject({ status: "captured", attempt: 2 });
        expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
      } finally {
        gated.release();
        repeat?.release();
        await Promise.all([app.close(), gated.close()]);
      }
    });

    for (const racer of ["the reconciler", "a re-press"] as const) {
      it(`a first send that did nothing while ${racer} on another instance is sending the same key: 503 payment-confirming, pending until that send answers, charged once`, async () => {
        const [storeA, storeB] = await storesOf(kind, 2);
        const data = createShopData(shops.sandbox());
        // Instance A's create call never leaves; instance B's reaches the service.
        const sendsNothing = gatedClient(data, "not_sent");
        const reaches = gatedClient(data, "sent");
        const a = await startShopApp(data, { ...QUIET, store: storeA, client: sendsNothing.client });
        const b = await startShopApp(data, { ...QUIET, store: storeB, client: reaches.client });
        try {
          const customer = data.customer();
          const cartId = data.cart(customer);
          const reference = data.referenceOf(cartId);
          const paying = charge(a, customer, { cartId });
          await sendsNothing.entered;
          const racing = racer === "the reconciler" ? b.router.reconcile() : charge(b, customer, { cartId });
          await reaches.entered;
          // A's send did nothing, but B's may reach the service: never "nothing happened".
          sendsNothing.release();
          const answered = await paying;
          expect(answered.status).toBe(503);
          expect(answered.json).toMatchObject({ type: "urn:purchase-auth:problem:payment-confirming" });
          // B counted its send before it went out (so A's count left it pending), and told core
          // that the key may have been sent before; A's first send did not.
          expect(sendsNothing.sends[0]?.firstSentAt).toBeUndefined();
          expect(reaches.sends[0]?.firstSentAt).toBeInstanceOf(Date);
          expect(await storeA!.findByReference(reference)).toMatchObject({
            status: "pending",
            pendingAuthorization: { sends: 2, undelivered: 1 },
          });

          reaches.release();
          await racing;
          expect(await storeA!.findByReference(reference)).toMatchObject({ status: "captured" });
          expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
          // The shopper's next look (or press) finds the charge paid, not a new attempt.
          const after = await charge(a, customer, { cartId });
          expect(after).toMatchObject({ status: 200, json: { status: "captured" } });
          expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
        } finally {
          sendsNothing.release();
          reaches.release();
          await Promise.all([a.close(), b.close(), sendsNothing.close(), reaches.close()]);
        }
      });
    }
  });
}
