import { signWebhook } from "@purchase-auth/core";
import { rateLimit } from "express-rate-limit";
import { request } from "undici";
import { describe, expect, it } from "vitest";
import {
  type Customer,
  call,
  charge,
  MERCHANT_KEY,
  staffOnly,
  useShops,
  WEBHOOK_SECRET,
} from "./support/shop.js";

// The router inside a real app: merchant routes mounted on their own path behind the app's own
// authentication, express-rate-limit in front of the shopper's routes but not of the webhooks, and
// live-update streams capped per customer and in all.

const { shop } = useShops();

/** The app's own staff check, in front of the separately mounted merchant routes. */
const requireStaff = (
  req: { get(name: string): string | undefined },
  res: { status(code: number): { json(body: unknown): void } },
  next: () => void,
) => {
  if (req.get("x-merchant-key") === MERCHANT_KEY) next();
  else res.status(401).json({ error: "staff only" });
};

async function post(url: string, headers: Record<string, string> = {}) {
  const response = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: "{}",
  });
  return { status: response.statusCode, json: JSON.parse((await response.body.text()) || "null") };
}

describe("merchant routes on a path of their own", () => {
  it('with merchantRoutes: "separate", they answer only behind the app\'s staff check', async () => {
    const { data, app } = await shop({
      authorizeMerchant: staffOnly,
      captureMode: "Manual",
      merchantRoutes: "separate",
      afterRouter: (express, router) => {
        express.use("/admin/payments", requireStaff, router.merchant);
      },
    });
    const customer = data.customer({ captureMode: "Manual" });
    const authorized = await charge(app, customer, { cartId: data.cart(customer) });
    expect(authorized.json.status).toBe("authorized");
    const id = authorized.json.authorizationId;

    // Not under the shop's mount any more, not even for staff.
    const underShop = await call(app, "POST", `/charges/${id}/capture`, { merchant: true, body: {} });
    expect(underShop.status).toBe(404);
    expect(underShop.json).toMatchObject({ status: 404, type: expect.stringContaining("not-found") });

    // The app's own authentication answers first.
    const stranger = await post(`${app.url}/admin/payments/charges/${id}/capture`);
    expect(stranger).toEqual({ status: 401, json: { error: "staff only" } });

    const staff = await post(`${app.url}/admin/payments/charges/${id}/capture`, {
      "x-merchant-key": MERCHANT_KEY,
    });
    expect(staff.status).toBe(200);
    expect(staff.json).toMatchObject({ status: "captured", order: { status: "Activated" } });
    const order = data.sandbox.orders({ authorizationId: id })[0]!;
    expect(order.capturedAmount).toBe(order.totalAmount);
  });

  it("by default they stay under the router's mount, and router.merchant serves them too", async () => {
    const { data, app } = await shop({
      authorizeMerchant: staffOnly,
      captureMode: "Manual",
      afterRouter: (express, router) => {
        express.use("/admin/payments", router.merchant);
      },
    });
    const customer = data.customer({ captureMode: "Manual" });
    const id = (await charge(app, customer, { cartId: data.cart(customer) })).json.authorizationId;
    const cancel = await call(app, "POST", `/charges/${id}/cancel`, { merchant: true, body: {} });
    expect(cancel.json).toMatchObject({ status: "cancelled" });
    // authorizeMerchant still guards the separate mount.
    const refused = await post(`${app.url}/admin/payments/charges/${id}/cancel`);
    expect(refused.status).toBe(403);
  });
});

describe("express-rate-limit, as the README mounts it", () => {
  it("throttles the shopper's charge route and never the service's webhooks", async () => {
    const { data, app } = await shop({
      beforeRouter: (express) => {
        // Only the shopper's and merchant's routes: a throttled webhook would be redelivered later,
        // leaving charges pending meanwhile.
        express.use(
          "/payments/charges",
          rateLimit({ windowMs: 60_000, limit: 2, standardHeaders: "draft-8", legacyHeaders: false }),
        );
      },
    });
    const customer = data.customer();
    const first = await charge(app, customer, { cartId: data.cart(customer) });
    const second = await charge(app, customer, { cartId: data.cart(customer) });
    const third = await charge(app, customer, { cartId: data.cart(customer) });
    expect([first.status, second.status, third.status]).toEqual([201, 201, 429]);
    // The third cart was never charged.
    expect(data.sandbox.authorizations({ merchantId: data.merchant.merchantId })).toHaveLength(2);

    // Five webhooks in a row all get through (an event about an unknown authorization is stored
    // and acknowledged).
    for (let index = 0; index < 5; index++) {
      const signed = signWebhook(
        {
          type: "authorization.failed",
          data: {
            authorizationId: crypto.randomUUID(),
            customerToken: customer.customerToken,
            reason: "PAYMENT_FAILED",
            attempt: 1,
          },
        },
        [WEBHOOK_SECRET],
      );
      const delivered = await call(app, "POST", "/webhooks", {
        rawBody: signed.body,
        headers: signed.headers,
      });
      expect(delivered.status).toBeLessThan(300);
    }
  });
});

describe("live-update streams are capped", () => {
  async function openStream(url: string, session: string) {
    const controller = new AbortController();
    const response = await request(url, { headers: { "x-session": session }, signal: controller.signal });
    return {
      status: response.statusCode,
      body: response.statusCode === 200 ? undefined : JSON.parse(await response.body.text()),
      close: async () => {
        controller.abort();
        await response.body.text().catch(() => undefined);
      },
    };
  }

  it("a client that leaves while its charge is still being read takes no slot", async () => {
    let lookup: ((session: string) => Customer | undefined) | undefined;
    const { data, app } = await shop({
      timing: "asap",
      liveUpdates: { maxStreamsPerCustomer: 2 },
      // A slow session store: the browser gives up before the router has read the charge.
      resolveCustomer: async (req) => {
        await new Promise((resolve) => setTimeout(resolve, 150));
        return lookup?.(req.get("x-session") ?? "") ?? null;
      },
    });
    lookup = (session) => data.customers.get(session);
    const alice = data.customer({ needsChallenge: true });
    data.sandbox.setWebhooks({ merchantId: data.merchant.merchantId, urls: [] }); // stays pending
    const id = (await charge(app, alice, { cartId: data.cart(alice) })).json.authorizationId;
    const url = `${app.url}/payments/charges/${id}/events`;

    const gaveUp = await Promise.all(
      [1, 2, 3].map(() =>
        request(url, { headers: { "x-session": alice.session }, signal: AbortSignal.timeout(30) }).then(
          () => "answered",
          () => "aborted",
        ),
      ),
    );
    expect(gaveUp).toEqual(["aborted", "aborted", "aborted"]);
    await new Promise((resolve) => setTimeout(resolve, 400)); // the router finishes reading them

    const first = await openStream(url, alice.session);
    const second = await openStream(url, alice.session);
    expect([first.status, second.status]).toEqual([200, 200]);
    await Promise.all([first.close(), second.close()]);
  });

  it("per customer and in all: beyond the cap a 429 problem; a closed stream frees its slot", async () => {
    const { data, app } = await shop({
      timing: "asap",
      liveUpdates: { maxStreamsPerCustomer: 2, maxStreams: 3, pollIntervalMs: 1_000 },
    });
    const alice = data.customer({ needsChallenge: true });
    const bob = data.customer({ needsChallenge: true });
    data.sandbox.setWebhooks({ merchantId: data.merchant.merchantId, urls: [] }); // stays pending
    const aliceCharge = (await charge(app, alice, { cartId: data.cart(alice) })).json.authorizationId;
    const bobCharge = (await charge(app, bob, { cartId: data.cart(bob) })).json.authorizationId;
    const aliceUrl = `${app.url}/payments/charges/${aliceCharge}/events`;
    const bobUrl = `${app.url}/payments/charges/${bobCharge}/events`;

    const a1 = await openStream(aliceUrl, alice.session);
    const a2 = await openStream(aliceUrl, alice.session);
    const a3 = await openStream(aliceUrl, alice.session);
    expect([a1.status, a2.status, a3.status]).toEqual([200, 200, 429]);
    expect(a3.body).toMatchObject({
      status: 429,
      type: expect.stringContaining("too-many-streams"),
      retryable: true,
    });

    const b1 = await openStream(bobUrl, bob.session);
    const b2 = await openStream(bobUrl, bob.session); // bob's second, but the fourth in all
    expect([b1.status, b2.status]).toEqual([200, 429]);

    await a1.close();
    // The server sees the close asynchronously: wait until a slot is free again.
    let again = await openStream(bobUrl, bob.session);
    for (let tries = 0; again.status !== 200 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await openStream(bobUrl, bob.session);
    }
    expect(again.status).toBe(200);
    await Promise.all([a2.close(), b1.close(), again.close()]);
  });
});
