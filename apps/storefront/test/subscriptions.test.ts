import { MemoryBatchStore } from "@purchase-auth/batch";
import { SHOPPER_MESSAGES } from "@purchase-auth/express";
import { DEMO } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RenewalJob } from "../src/subscriptions/renewal-job.js";
import { ShopClient } from "./support/shop-client.js";
import { startTestStorefront, type TestStorefront } from "./support/storefront.js";

// "Re-order every month" over real HTTP, on the embedded sandbox: the renewal job charges through
// @purchase-auth/batch on the sandbox's virtual clock, moved by the demo control. What is checked is
// what the sandbox holds (its authorizations) and what the customer and the merchant see.

let shop: TestStorefront;

beforeAll(async () => {
  shop = await startTestStorefront();
});

afterAll(async () => {
  await shop?.close();
});

const sandbox = () => shop.embedded!.sandbox;
const context = () => shop.storefront.shop;
const authorizationsOf = (reference: string) =>
  sandbox()
    .authorizations()
    .filter((entry) => entry.reference === reference);

/** Signs in, buys two bags of house beans (€49.80) now with auto capture, paid; returns the order's reference. */
async function buyAs(customerId: string): Promise<{ shopper: ShopClient; reference: string }> {
  const shopper = new ShopClient(shop.url);
  await shopper.signIn(customerId);
  await shopper.addToCart("beans-house-1kg", 2);
  const charge = await shopper.postJson("/payments/charges", {
    cartId: await shopper.cartId(),
    captureMode: "Auto",
    timing: "now",
  });
  expect(charge.status).toBe(201);
  await sandbox().settle(); // a challenge is confirmed by webhook: delivered once settled
  expect((await context().charges.findByReference(charge.json.reference))?.status).toBe("captured");
  return { shopper, reference: charge.json.reference };
}

/** "Re-order this every month" on the order's page; returns the new subscription's id. */
async function subscribe(shopper: ShopClient, reference: string): Promise<string> {
  const order = await shopper.open(`/orders/${reference}`);
  expect(order.text).toContain('data-role="reorder"');
  const answer = await shopper.postForm(`/orders/${reference}/subscribe`, {});
  expect(answer.status).toBe(303);
  expect(answer.headers.get("location")).toBe("/subscriptions");
  const page = await shopper.open("/subscriptions");
  expect(page.text).toContain("We will re-order this every month.");
  const id = context().subscriptions.fromOrder(reference)?.id;
  expect(id).toMatch(/^SUB-/);
  expect(page.text).toContain(`data-subscription-id="${id}" data-status="active"`);
  return id!;
}

/** The demo control: the sandbox clock one month on, then a renewal pass. */
async function moveOneMonth(shopper: ShopClient): Promise<void> {
  const answer = await shopper.postForm("/demo/sandbox-clock/month", { returnTo: "/subscriptions" });
  expect(answer.status).toBe(303);
  expect(answer.headers.get("location")).toBe("/subscriptions");
}

function renewalRow(page: string, period: number): string {
  const row = new RegExp(`<tr data-period="${period}"[^>]*>[\\s\\S]*?</tr>`).exec(page);
  expect(row, `renewal ${period} on the page`).not.toBeNull();
  return row![0];
}

describe("re-order every month", () => {
  it("renews a month later as a new paid order, with exactly one authorization per period", async () => {
    const { shopper, reference } = await buyAs("alice");
    const id = await subscribe(shopper, reference);
    const first = `${id}-P01`;

    await moveOneMonth(shopper);
    let page = await shopper.open("/subscriptions");
    expect(page.text).toContain("The sandbox clock moved one month");
    expect(renewalRow(page.text, 1)).toContain('data-status="charged"');

    // The renewal is an order of its own, paid, linked to the subscription.
    const order = await shopper.open(`/orders/${first}`);
    expect(order.text).toContain('data-status="captured"');
    expect(order.text).toContain("This order is a monthly renewal.");
    expect(order.text).not.toContain('data-role="reorder"');
    expect((await shopper.open("/orders")).text).toContain(first);

    // What the sandbox holds: one successful authorization, of the subscription's amount, on Alice's token.
    expect(authorizationsOf(first)).toHaveLength(1);
    expect(authorizationsOf(first)[0]).toMatchObject({
      status: "Succeeded",
      amount: "49.80",
      customerToken: DEMO.tokens.active,
    });

    // The clock moved twice more within the same period and the job ran twice: still one.
    for (let i = 0; i < 2; i++) {
      expect((await shopper.postForm("/demo/sandbox-clock", {})).status).toBe(200);
      await context().renewals.run();
    }
    expect(authorizationsOf(first)).toHaveLength(1);
    expect(authorizationsOf(`${id}-P02`)).toHaveLength(0);

    // A crash after the charge was sent and before its outcome was recorded: the shop's record says
    // "charging" and the batch state is gone (a new process). The same period is the same item and
    // key, so the service answers with the first outcome: still one authorization.
    const renewal = context().subscriptions.get(id)!.renewals[0]!;
    renewal.status = "charging";
    const restarted = new RenewalJob({
      subscriptions: context().subscriptions,
      orders: context().orders,
      charges: context().charges,
      client: context().client,
      now: context().now,
      store: new MemoryBatchStore(),
    });
    const requestsBefore = sandbox().stats().requests;
    await restarted.run();
    expect(sandbox().stats().requests).toBeGreaterThan(requestsBefore); // it was sent again…
    expect(renewal.status).toBe("charged");
    expect(authorizationsOf(first)).toHaveLength(1); // …and answered with the first outcome

    // Next month: the second period, a new order and one authorization of its own.
    await moveOneMonth(shopper);
    page = await shopper.open("/subscriptions");
    expect(renewalRow(page.text, 2)).toContain('data-status="charged"');
    expect(authorizationsOf(`${id}-P02`)).toHaveLength(1);
    expect(authorizationsOf(`${id}-P02`)[0]!.idempotencyKey).not.toBe(
      authorizationsOf(first)[0]!.idempotencyKey,
    );
    expect(authorizationsOf(first)).toHaveLength(1);
  });

  it("stops a subscription whose renewal is declined for a reason not worth retrying, and says why", async () => {
    // Dev's payment method had funds for his first order; by the renewal it has none.
    sandbox().updateCustomerToken(DEMO.tokens.noFunds, { funds: "100.00" });
    const { shopper, reference } = await buyAs("dev");
    const id = await subscribe(shopper, reference);
    sandbox().updateCustomerToken(DEMO.tokens.noFunds, { funds: "0.00" });

    await moveOneMonth(shopper);
    const page = await shopper.open("/subscriptions");
    const row = renewalRow(page.text, 1);
    expect(row).toContain('data-status="declined"');
    expect(row).toContain('data-reason="PAYMENT_METHOD_NO_FUNDS"');
    expect(row).toContain(SHOPPER_MESSAGES.PAYMENT_METHOD_NO_FUNDS);
    expect(page.text).toContain(`data-subscription-id="${id}" data-status="stopped"`);
    expect(page.text).toContain('data-role="stopped" data-reason="PAYMENT_METHOD_NO_FUNDS"');

    // Sent once, never retried; and a stopped subscription renews nothing more.
    expect(authorizationsOf(`${id}-P01`)).toHaveLength(1);
    expect(authorizationsOf(`${id}-P01`)[0]!.status).toBe("Failed");
    await moveOneMonth(shopper);
    expect(authorizationsOf(`${id}-P02`)).toHaveLength(0);
    expect(context().subscriptions.get(id)!.renewals).toHaveLength(1);

    // The merchant sees the decline by reason and the stopped subscription with why.
    const merchant = new ShopClient(shop.url);
    await merchant.open("/merchant/sign-in");
    expect(
      (await merchant.postForm("/merchant/sign-in", { username: "merchant", password: "demo" })).status,
    ).toBe(303);
    const back = await merchant.open("/merchant/subscriptions");
    expect(back.text).toMatch(
      /data-role="declines-by-reason"[\s\S]*<tr data-reason="PAYMENT_METHOD_NO_FUNDS"><th scope="row"><code>PAYMENT_METHOD_NO_FUNDS<\/code><\/th><td class="num">1<\/td>/,
    );
    expect(back.text).toMatch(
      new RegExp(
        `<tr data-subscription-id="${id}" data-reason="PAYMENT_METHOD_NO_FUNDS">[\\s\\S]*?not worth retrying, so the subscription stopped at once`,
      ),
    );
  });

  it("retries PAYMENT_FAILED as a new attempt with a new key, on the sandbox's clock", async () => {
    // Ben's organisation approved his payment method; his first renewal then fails once.
    sandbox().setCustomerTokenStatus(DEMO.tokens.pendingReview, "Active");
    const { shopper, reference } = await buyAs("ben");
    const id = await subscribe(shopper, reference);
    sandbox().updateCustomerToken(DEMO.tokens.pendingReview, { failNextAttempts: ["PAYMENT_FAILED"] });
    const first = `${id}-P01`;

    await moveOneMonth(shopper);
    let page = await shopper.open("/subscriptions");
    expect(renewalRow(page.text, 1)).toContain('data-status="retrying"');
    expect(renewalRow(page.text, 1)).toContain(SHOPPER_MESSAGES.PAYMENT_FAILED);
    expect(authorizationsOf(first)).toHaveLength(1);

    // Not due yet on the sandbox's clock (one day later): a pass sends nothing.
    await context().renewals.run();
    expect(authorizationsOf(first)).toHaveLength(1);

    await moveOneMonth(shopper);
    page = await shopper.open("/subscriptions");
    expect(renewalRow(page.text, 1)).toContain('data-status="charged"');
    const attempts = authorizationsOf(first);
    expect(attempts.map((entry) => entry.status)).toEqual(["Failed", "Succeeded"]);
    expect(attempts[0]!.idempotencyKey).not.toBe(attempts[1]!.idempotencyKey);
    expect(context().subscriptions.get(id)!.status).toBe("active");

    // Two months have passed: the second period fell due in the same pass, once the first was paid.
    expect(renewalRow(page.text, 2)).toContain('data-status="charged"');

    // Ben stops it: the next month renews nothing.
    expect((await shopper.postForm(`/subscriptions/${id}/cancel`, {})).status).toBe(303);
    page = await shopper.open("/subscriptions");
    expect(page.text).toContain('data-role="stopped" data-reason="CANCELLED_BY_CUSTOMER"');
    await moveOneMonth(shopper);
    expect(context().subscriptions.get(id)!.renewals).toHaveLength(2);
    expect(authorizationsOf(`${id}-P03`)).toHaveLength(0);
  });

  it("a stop is final: a renewal never sent is not sent after it, a declined resend makes no new attempt", async () => {
    const CREATE = { method: "POST", path: "/purchase/authorizations" } as const;
    const oneMonthAndADay = 32 * 24 * 3_600_000;
    // Alice's earlier subscriptions would renew in the same passes (and meet the faults below).
    for (const earlier of context().subscriptions.forCustomer("alice")) {
      context().subscriptions.stop(earlier, "CANCELLED_BY_CUSTOMER", new Date(context().now()));
    }

    // A: the service cannot be reached at all (every token request fails): nothing goes out.
    const a = await buyAs("alice");
    const stopsBeforeSending = await subscribe(a.shopper, a.reference);
    sandbox().revokeAccessTokens();
    sandbox().injectFault({ kind: "unavailable", count: null, match: { path: "/oauth2" } });
    sandbox().advanceClock(oneMonthAndADay);
    await context().renewals.run();
    sandbox().clearFaults();
    expect(context().subscriptions.get(stopsBeforeSending)!.renewals[0]!.status).toBe("charging");
    expect(authorizationsOf(`${stopsBeforeSending}-P01`)).toHaveLength(0);
    expect((await a.shopper.postForm(`/subscriptions/${stopsBeforeSending}/cancel`, {})).status).toBe(303);
    await context().renewals.run();
    expect(authorizationsOf(`${stopsBeforeSending}-P01`)).toHaveLength(0);
    expect(context().subscriptions.get(stopsBeforeSending)!.renewals[0]!.status).toBe("declined");

    // B: a renewal whose outcome is unknown is stopped; its resend (same key) is declined
    // PAYMENT_FAILED, which would otherwise be retried as a new attempt: none follows.
    const b = await buyAs("alice");
    const stopsWhileUnknown = await subscribe(b.shopper, b.reference);
    sandbox().injectFault({
      kind: "gateway_error",
      status: 504,
      phase: "before_commit",
      count: null,
      match: CREATE,
    });
    sandbox().advanceClock(oneMonthAndADay);
    await context().renewals.run();
    sandbox().clearFaults();
    const renewal = () => context().subscriptions.get(stopsWhileUnknown)!.renewals[0]!;
    expect(renewal().status).toBe("charging");
    sandbox().updateCustomerToken(DEMO.tokens.active, { failNextAttempts: ["PAYMENT_FAILED"] });
    expect((await b.shopper.postForm(`/subscriptions/${stopsWhileUnknown}/cancel`, {})).status).toBe(303);
    // The resend of an unknown outcome is due a moment later (real time: keys age in real time).
    const item = await context().renewals.store.get("storefront-renewals", renewal().itemId);
    const due = item?.notBefore?.getTime() ?? 0;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now() + 20)));
    await context().renewals.run(); // the same key again, to learn the outcome
    expect(renewal()).toMatchObject({ status: "declined", reason: "PAYMENT_FAILED" });
    sandbox().advanceClock(oneMonthAndADay);
    await context().renewals.run();
    const sent = authorizationsOf(`${stopsWhileUnknown}-P01`);
    expect(sent.map((entry) => entry.status)).toEqual(["Failed"]);
  });

  it("follows a renewal accepted for a challenge until its webhook says it was paid", async () => {
    const { shopper, reference } = await buyAs("emma");
    const id = await subscribe(shopper, reference);

    await moveOneMonth(shopper);
    const renewal = context().subscriptions.get(id)!.renewals[0]!;
    expect(renewal.status).toBe("awaiting"); // answered 202: the outcome comes by webhook
    await sandbox().settle();
    await context().renewals.run();
    expect(renewal.status).toBe("charged");
    const order = await shopper.open(`/orders/${id}-P01`);
    expect(order.text).toContain('data-status="captured"');
    expect(authorizationsOf(`${id}-P01`).map((entry) => entry.status)).toEqual(["Succeeded"]);
  });
});
