import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import { freshSchema, postgresStore } from "./support/database.js";
import {
  type AppOptions,
  call,
  charge,
  createShopData,
  type ShopApp,
  type ShopData,
  startShopApp,
} from "./support/shop.js";
import { readEventStream } from "./support/sse.js";

// Two instances of one app behind a load balancer, sharing PostgreSQL: webhooks reach instance A,
// shoppers talk to instance B.

let sandbox: SandboxServer;
let database: Awaited<ReturnType<typeof freshSchema>>;
const apps: ShopApp[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  database = await freshSchema();
});
afterAll(async () => {
  await sandbox.close();
  await database.drop();
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** Instance A receives the webhooks; instance B does not. Each has its own pool and store object. */
async function twoInstances(): Promise<{ data: ShopData; a: ShopApp; b: ShopApp }> {
  const data = createShopData(sandbox);
  const options: AppOptions = {
    timing: "asap",
    allowedTimings: ["now", "scheduled"],
    schedules: { "in-ten-minutes": ["00.00:10:00"] },
    schedule: "in-ten-minutes",
    liveUpdates: { pollIntervalMs: 50 },
  };
  const a = await startShopApp(data, { ...options, store: await postgresStore(database.newPool()) });
  const b = await startShopApp(data, {
    ...options,
    store: await postgresStore(database.newPool()),
    receiveWebhooks: false,
  });
  apps.push(a, b);
  return { data, a, b };
}

describe("two app instances sharing the PostgreSQL store", () => {
  it("a webhook received by instance A shows in the status read on instance B", async () => {
    const { data, a, b } = await twoInstances();
    const customer = data.customer();
    // Scheduled, so nothing happens before the clock moves: with "as soon as possible" the webhook
    // could reach A before B has even recorded the service's answer.
    const reply = await charge(b, customer, { cartId: data.cart(customer), timing: "scheduled" });
    expect(reply.json.status).toBe("pending");

    sandbox.advanceClock(10 * 60_000); // the scheduled attempt runs; its webhooks go to A
    await sandbox.settle();

    const deliveries = sandbox.webhookDeliveries().filter((d) => d.merchantId === data.merchant.merchantId);
    expect(deliveries.every((delivery) => delivery.url.startsWith(a.url))).toBe(true);
    expect(a.appliedEvents.map((event) => event.type)).toEqual(["authorization.succeeded", "order.captured"]);
    const onB = await call(b, "GET", `/charges/${reply.json.authorizationId}`, { customer });
    expect(onB.json).toMatchObject({ status: "captured", orderId: expect.any(String) });
  });

  it("a live-update stream on B sees what A's webhook changed (by polling the store)", async () => {
    const { data, a, b } = await twoInstances();
    const customer = data.customer();
    const reply = await charge(b, customer, { cartId: data.cart(customer), timing: "scheduled" });
    expect(reply.json.status).toBe("pending");

    const stream = await readEventStream(
      b,
      `/charges/${reply.json.authorizationId}/events`,
      customer,
      async (_, index) => {
        if (index > 0) return;
        sandbox.advanceClock(10 * 60_000); // the scheduled attempt runs; its webhooks go to A
        await sandbox.settle();
      },
    );

    expect(a.appliedEvents.map((event) => event.type)).toEqual(["authorization.succeeded", "order.captured"]);
    const statuses = stream.events.map((event) => JSON.parse(event.data).status);
    expect(statuses[0]).toBe("pending");
    expect(statuses.at(-1)).toBe("captured");
    expect(stream.events.at(-1)?.event).toBe("end");
  });

  it("a double click across instances (one POST to each) makes one authorization", async () => {
    const { data, a, b } = await twoInstances();
    const customer = data.customer();
    const cartId = data.cart(customer);
    // Overlap the two create calls: the service sees the same key twice while the first runs.
    sandbox.injectFault({ kind: "latency", latencyMs: 100, match: { path: "/purchase/authorizations" } });

    const replies = await Promise.all([charge(a, customer, { cartId }), charge(b, customer, { cartId })]);

    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
    // The loser either learnt the same authorization (its retries saw the stored answer) or, if the
    // first was still running when its retries ran out, answered "confirming"; a repeat settles it.
    for (const reply of replies) expect([200, 201, 503]).toContain(reply.status);
    const settled = await charge(b, customer, { cartId });
    expect(settled.status).toBe(200);
    expect(settled.json.authorizationId).toBe(
      sandbox.authorizations({ merchantId: data.merchant.merchantId })[0]!.authorizationId,
    );
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("both give up on one charge at once (its outcome overdue, its key past the window): one alert each time, never two", async () => {
    const data = createShopData(sandbox);
    const clock = { offset: 0 };
    const alerts: PaymentAlert[] = [];
    const options: AppOptions = {
      timing: "asap",
      allowedTimings: ["now"],
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      clientOptions: { maxRetries: 1 },
      now: () => Date.now() + clock.offset,
      onAlert: (alert) => {
        alerts.push(alert);
      },
    };
    const a = await startShopApp(data, { ...options, store: await postgresStore(database.newPool()) });
    const b = await startShopApp(data, { ...options, store: await postgresStore(database.newPool()) });
    apps.push(a, b);
    const customer = data.customer();
    // Accepted (202), and its webhooks never arrive.
    const accepted = await charge(a, customer, { cartId: data.cart(customer) });
    expect(accepted.json.status).toBe("pending");
    // Another charge whose answer was lost; nobody resends it within the window.
    sandbox.injectFault({
      kind: "drop_after_commit",
      match: { path: "/purchase/authorizations" },
      count: null,
    });
    const lost = await charge(b, customer, { cartId: data.cart(customer), timing: "now" });
    sandbox.clearFaults();
    expect(lost.status).toBe(503);

    clock.offset = 2 * 24 * 3_600_000;
    sandbox.advanceClock(2 * 24 * 3_600_000);
    const reports = await Promise.all([a.router.reconcile(), b.router.reconcile()]);
    expect(reports[0]!.needsReview + reports[1]!.needsReview).toBe(2);
    expect(alerts.map((alert) => alert.kind)).toEqual(["needs_review", "needs_review"]);
    expect(new Set(alerts.map((alert) => alert.reference)).size).toBe(2);
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(2);
  });
});
