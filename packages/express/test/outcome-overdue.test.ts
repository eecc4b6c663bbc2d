import { signWebhook } from "@purchase-auth/core";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import { call, charge, startShopApp, useShops, WEBHOOK_SECRET } from "./support/shop.js";

// A charge the service accepted (202) learns its outcome only by webhook: there is no call to ask
// the service about an authorization. If every delivery is lost (the shop's endpoint was down for
// longer than the service redelivers), the charge must not stay "pending" for ever: once its last
// scheduled attempt is well past, the reconciler hands it to a person, and a webhook that still
// arrives moves it on. Checked against the sandbox's own records.

const shops = useShops();
const { shop } = shops;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
afterEach(() => shops.sandbox().clearFaults());

/** A shop whose webhooks never arrive, with a clock the test moves. */
async function shopWithLostWebhooks(options: Parameters<typeof shop>[0] = {}) {
  const clock = { offset: 0 };
  const alerts: PaymentAlert[] = [];
  const started = await shop({
    receiveWebhooks: false,
    reconcileIntervalMs: 0,
    now: () => Date.now() + clock.offset,
    onAlert: (alert) => {
      alerts.push(alert);
    },
    ...options,
  });
  return { ...started, clock, alerts };
}

describe("an accepted charge whose outcome webhooks are all lost", () => {
  it("is handed to review with an alert once its last attempt is a grace period past, and a late webhook still settles it", async () => {
    const { data, app, clock, alerts } = await shopWithLostWebhooks({ allowedTimings: ["asap"] });
    const customer = data.customer();
    const cartId = data.cart(customer);
    const reference = data.referenceOf(cartId);
    const accepted = await charge(app, customer, { cartId, timing: "asap" });
    expect(accepted.json).toMatchObject({ status: "pending", authorizationId: expect.any(String) });
    const sandbox = shops.sandbox();
    await sandbox.settle();
    // The service captured the money; the shop heard nothing.
    expect(sandbox.orders({ authorizationId: accepted.json.authorizationId })[0]?.status).toBe("Activated");

    clock.offset = 23 * HOUR;
    expect(await app.router.reconcile()).toMatchObject({ examined: 1, needsReview: 0 });
    expect(await app.router.store.findByReference(reference)).toMatchObject({ status: "pending" });
    expect(alerts).toEqual([]);

    clock.offset = DAY + HOUR;
    expect(await app.router.reconcile()).toMatchObject({ examined: 1, needsReview: 1 });
    expect(await app.router.store.findByReference(reference)).toMatchObject({
      status: "needs_review",
      reason: "OUTCOME_OVERDUE",
      authorizationId: accepted.json.authorizationId,
    });
    expect(alerts).toEqual([
      expect.objectContaining({
        kind: "needs_review",
        reference,
        authorizationId: accepted.json.authorizationId,
      }),
    ]);
    expect(JSON.stringify(app.errorLogs)).toContain("ALERT needs_review");
    const shown = await call(app, "GET", `/charges/${accepted.json.authorizationId}`, { customer });
    expect(shown.json.status).toBe("needs_review");
    // Not pending any more: the next passes leave it, and never alert twice.
    expect(await app.router.reconcile()).toMatchObject({ examined: 0, needsReview: 0 });
    expect(alerts).toHaveLength(1);

    // The service's redeliveries get through after all: the truth still counts.
    const outcome = sandbox
      .events()
      .filter(
        ({ event }) =>
          (event.data as { authorizationId?: string }).authorizationId === accepted.json.authorizationId,
      );
    expect(outcome.map(({ event }) => event.type)).toEqual(["authorization.succeeded", "order.captured"]);
    for (const { event } of outcome) {
      const signed = signWebhook(event, [WEBHOOK_SECRET]);
      const delivered = await call(app, "POST", "/webhooks", {
        rawBody: signed.body,
        headers: signed.headers,
      });
      expect(delivered.status).toBeLessThan(300);
    }
    const [order] = sandbox.orders({ authorizationId: accepted.json.authorizationId });
    expect(await app.router.store.findByReference(reference)).toMatchObject({
      status: "captured",
      orderId: order!.orderId,
    });
    expect(sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(1);
  });

  it("is not overdue before its schedule's last attempt, however long that is", async () => {
    const { data, app, clock, alerts } = await shopWithLostWebhooks({
      allowedTimings: ["scheduled"],
      schedules: { "twice-two-days-apart": ["2.00:00:00", "2.00:00:00"] },
    });
    const customer = data.customer();
    const cartId = data.cart(customer);
    const accepted = await charge(app, customer, {
      cartId,
      timing: "scheduled",
      schedule: "twice-two-days-apart",
    });
    expect(accepted.json.status).toBe("pending");

    // Three days on: a day past the first attempt, a day before the last.
    clock.offset = 3 * DAY;
    expect(await app.router.reconcile()).toMatchObject({ needsReview: 0 });
    // The last attempt and a day's grace: still nothing heard.
    clock.offset = 4 * DAY + DAY - HOUR;
    expect(await app.router.reconcile()).toMatchObject({ needsReview: 0 });
    expect(alerts).toEqual([]);
    clock.offset = 5 * DAY + HOUR;
    expect(await app.router.reconcile()).toMatchObject({ needsReview: 1 });
    expect(await app.router.store.findByReference(data.referenceOf(cartId))).toMatchObject({
      status: "needs_review",
      reason: "OUTCOME_OVERDUE",
    });
  });

  it("news of a retry counts the grace from the news", async () => {
    const { data, app, clock, alerts } = await shopWithLostWebhooks({
      allowedTimings: ["asap"],
      outcomeGraceMs: HOUR,
    });
    const customer = data.customer();
    const cartId = data.cart(customer);
    const reference = data.referenceOf(cartId);
    const accepted = await charge(app, customer, { cartId, timing: "asap" });
    clock.offset = 2 * HOUR;
    // An authorization.retrying arrives now (as far as the shop's clock goes).
    const retrying = signWebhook(
      {
        type: "authorization.retrying",
        data: {
          authorizationId: accepted.json.authorizationId,
          customerToken: customer.customerToken,
          reason: "INSUFFICIENT_FUNDS",
          attempt: 1,
          maxAttempts: 2,
          nextAttemptAt: new Date(Date.now() + clock.offset).toISOString(),
        },
      },
      [WEBHOOK_SECRET],
    );
    expect(
      (await call(app, "POST", "/webhooks", { rawBody: retrying.body, headers: retrying.headers })).status,
    ).toBeLessThan(300);
    const retried = await app.router.store.findByReference(reference);
    expect(retried).toMatchObject({ status: "pending", reason: "INSUFFICIENT_FUNDS" });
    // Without the news it would be overdue 55 minutes (the resend window) plus the grace after the
    // send; the news two hours later counts the grace from then.
    clock.offset = 2 * HOUR + HOUR / 2;
    expect(await app.router.reconcile()).toMatchObject({ needsReview: 0 });
    clock.offset = 3 * HOUR + 60_000;
    expect(await app.router.reconcile()).toMatchObject({ needsReview: 1 });
    expect(alerts).toHaveLength(1);
  });

  it("counts a schedule from the latest the service can have created the authorization (a resend within the window)", async () => {
    const { data, app, clock } = await shopWithLostWebhooks({ allowedTimings: ["asap"] });
    const customer = data.customer();
    const cartId = data.cart(customer);
    expect((await charge(app, customer, { cartId, timing: "asap" })).json.status).toBe("pending");
    // A day after the send, but not a day after the window in which a resend could have created it.
    clock.offset = DAY + HOUR / 2;
    expect(await app.router.reconcile()).toMatchObject({ needsReview: 0 });
    clock.offset = DAY + HOUR;
    expect(await app.router.reconcile()).toMatchObject({ needsReview: 1 });
  });

  it("two instances that give it up at once raise one alert", async () => {
    const store = new MemoryChargeStore();
    const first = await shopWithLostWebhooks({ allowedTimings: ["asap"], store });
    const clock = first.clock;
    const alerts = first.alerts;
    const second = await startShopApp(first.data, {
      store,
      receiveWebhooks: false,
      reconcileIntervalMs: 0,
      allowedTimings: ["asap"],
      now: () => Date.now() + clock.offset,
      onAlert: (alert) => {
        alerts.push(alert);
      },
    });
    try {
      const customer = first.data.customer();
      const accepted = await charge(first.app, customer, {
        cartId: first.data.cart(customer),
        timing: "asap",
      });
      expect(accepted.json.status).toBe("pending");
      clock.offset = 2 * DAY;
      const reports = await Promise.all([first.app.router.reconcile(), second.router.reconcile()]);
      expect(reports.map((report) => report.needsReview).sort()).toEqual([0, 1]);
      expect(alerts).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
