import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type ChargeRecord, MemoryChargeStore, type PendingCursor } from "../src/index.js";
import { chargeSentAt, nextWeek, offlineRouter, sandboxChargeSentAt } from "./support/offline-router.js";
import { recordingClient } from "./support/recording-client.js";
import { createShopData, useShops } from "./support/shop.js";

// Pending charges without an authorization id (a lost answer, a crash mid-call) must be resent with
// their key while the service remembers it. Every reconcile pass looks at them first; after an outage
// of the service there are more than a pass takes, and they are spread over the next passes instead
// of being sent again by the sweep through all pending charges (each send may take the timeout).

const shops = useShops();
const { reconcilingShop } = shops;
afterEach(() => shops.sandbox().clearFaults());

/** A router on `store` charging a new merchant at the sandbox, with a customer whose token it charges. */
async function sandboxRouter(store: MemoryChargeStore) {
  const { data, app } = await reconcilingShop(store);
  return { router: app.router, merchantId: data.merchant.merchantId, customer: data.customer() };
}

describe("the reconciler and unanswered charges", () => {
  it("resends the stored write-ahead request verbatim, with firstSentAt, over the withTimeout path", async () => {
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    const store = new MemoryChargeStore();
    const sentAt = Date.now() - 60_000;
    const lost = sandboxChargeSentAt(data.customer().customerToken, sentAt, nextWeek());
    await store.create(lost);
    const { client, calls, close } = recordingClient(data);
    const router = offlineRouter({ store, client, clientOptions: undefined } as never);
    const report = await router.reconcile().finally(async () => {
      await router.close();
      await close();
    });
    expect(report).toMatchObject({ examined: 1, resolved: 1 });
    expect(calls).toHaveLength(1);
    expect(JSON.stringify(calls[0]!.request)).toBe(JSON.stringify(lost.pendingAuthorization!.request));
    expect(Object.keys(calls[0]!.options!)).toEqual(["idempotencyKey", "signal", "firstSentAt"]);
    expect(calls[0]!.options!.firstSentAt!.getTime()).toBe(sentAt);
    // The service accepted it once, under the stored key, and the charge holds its answer.
    const authorizations = sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(authorizations).toHaveLength(1);
    expect(authorizations[0]).toMatchObject({
      idempotencyKey: lost.pendingAuthorization!.idempotencyKey,
      reference: lost.reference,
    });
    expect(await store.findByReference(lost.reference)).toMatchObject({
      status: "pending",
      authorizationId: authorizations[0]!.authorizationId,
    });
  });

  it("sends an unanswered charge once per pass though both sweeps list it, and counts it once", async () => {
    const sandbox = shops.sandbox();
    const data = createShopData(sandbox);
    const store = new MemoryChargeStore();
    const customer = data.customer();
    for (let i = 0; i < 3; i++)
      await store.create(chargeSentAt(Date.now() - 1000 * i, nextWeek(), { authorizationId: randomUUID() }));
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const unanswered = sandboxChargeSentAt(customer.customerToken, Date.now() - 60_000 - i, nextWeek());
      keys.push(unanswered.pendingAuthorization!.idempotencyKey);
      await store.create(unanswered);
    }
    // Counted where the router calls its client: the service answers a repeated key from its
    // store, so a second send would not show there.
    const { client, calls, close } = recordingClient(data);
    const router = offlineRouter({ store, client, clientOptions: undefined } as never);
    const report = await router.reconcile().finally(async () => {
      await router.close();
      await close();
    });
    expect(calls.map((call) => call.options?.idempotencyKey).sort()).toEqual([...keys].sort());
    const authorizations = sandbox.authorizations({ merchantId: data.merchant.merchantId });
    expect(authorizations.map((authorization) => authorization.idempotencyKey).sort()).toEqual(keys.sort());
    expect(report).toMatchObject({ examined: 6, resolved: 3 });
  });

  it("a store whose listUnanswered ignores `after` still reaches every unanswered charge (through the pending sweep)", async () => {
    class IgnoresAfter extends MemoryChargeStore {
      override listUnanswered(limit: number, _after?: PendingCursor): Promise<ChargeRecord[]> {
        return super.listUnanswered(limit);
      }
    }
    const store = new IgnoresAfter();
    const { router, merchantId, customer } = await sandboxRouter(store);
    // 300 unanswered (a service outage), all stay unknown: the service makes each, every answer is lost.
    for (let i = 0; i < 300; i++)
      await store.create(sandboxChargeSentAt(customer.customerToken, Date.now() - 120_000 + i, nextWeek()));
    const sandbox = shops.sandbox();
    sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    const report = await router.reconcile();
    expect(report).toMatchObject({ examined: 300, stillUnknown: 300 });
    // Every key reached the service: one authorization each.
    const reached = new Set(
      sandbox.authorizations({ merchantId }).map((authorization) => authorization.idempotencyKey),
    );
    expect(reached.size).toBe(300);
  }, 60_000);
});
