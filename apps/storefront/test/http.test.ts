import { SHOPPER_MESSAGES } from "@purchase-auth/express";
import { DEMO } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, ShopClient } from "./support/shop-client.js";
import { startTestStorefront, type TestStorefront } from "./support/storefront.js";

// The shop over real HTTP, on the embedded sandbox, as `pnpm start` runs it.

let shop: TestStorefront;
const client = () => new ShopClient(shop.url);

beforeAll(async () => {
  shop = await startTestStorefront();
});

afterAll(async () => {
  await shop?.close();
});

/** Nothing a visitor should ever see: a stack, a file path, an error's own text. */
function expectNoInternals(answer: Answer): void {
  expect(answer.text).not.toMatch(/\bat .+\.(ts|js):\d+/); // a stack frame
  expect(answer.text).not.toMatch(/node_modules|\/work\/|src\/|dist\//);
  expect(answer.text).not.toMatch(/TypeError|ReferenceError|URIError|SyntaxError|PayloadTooLargeError/);
}

describe("pages", () => {
  it("serves the catalogue with prices from the server and a strict Content-Security-Policy", async () => {
    const page = await client().open("/");
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.text).toContain("House blend beans, 1 kg");
    expect(page.text).toContain("€24.90");
    const policy = page.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("script-src 'self'");
    expect(policy).not.toContain("unsafe-inline");
    expect(page.headers.get("set-cookie")).toMatch(/hb_session=[^;]+;.*HttpOnly.*SameSite=Lax/i);
  });

  it("serves the stylesheet and the page scripts", async () => {
    const shopper = client();
    for (const asset of ["styles.css", "checkout.js", "order-status.js", "merchant.js", "api.js"]) {
      expect((await shopper.get(`/assets/${asset}`)).status).toBe(200);
    }
  });

  it("shows each demo customer's payment method state in the sign-in picker", async () => {
    const page = await client().open("/sign-in");
    for (const label of ["Active", "Pending review", "Revoked", "No funds", "Needs a challenge"]) {
      expect(page.text).toContain(label);
    }
    expect(page.text).toContain("Saved payment method •••• 0001");
    expect(page.text).not.toContain(DEMO.tokens.active); // the token itself never reaches the browser
  });
});

describe("cart", () => {
  it("keeps the cart on the server and totals it with catalogue prices", async () => {
    const shopper = client();
    await shopper.open("/");
    await shopper.addToCart("beans-house-1kg", 2);
    await shopper.addToCart("mug-stoneware", 1);
    let cart = await shopper.open("/cart");
    expect(cart.text).toMatch(/data-cart-total>€59\.30</);

    expect((await shopper.postForm("/cart/items/mug-stoneware", { quantity: "0" })).status).toBe(303);
    cart = await shopper.open("/cart");
    expect(cart.text).not.toContain("Stoneware mug");
    expect(cart.text).toMatch(/data-cart-total>€49\.80</);
  });

  it("refuses an unknown product with a 404 page", async () => {
    const shopper = client();
    await shopper.open("/");
    const answer = await shopper.postForm("/cart/items", { sku: "free-espresso-machine", quantity: "1" });
    expect(answer.status).toBe(404);
    expect(answer.text).toContain("That product is not in our catalogue.");
  });

  it("refuses a form without the session's CSRF token", async () => {
    const shopper = client();
    await shopper.open("/");
    const answer = await shopper.postForm("/cart/items", { sku: "beans-house-1kg" }, { csrf: false });
    expect(answer.status).toBe(403);
    expect(answer.text).toContain("This form has expired");
    expect((await shopper.open("/cart")).text).toContain("Your cart is empty.");
  });
});

describe("sign-in and checkout", () => {
  it("sends a visitor to sign in before checkout, renews the session, and returns to checkout", async () => {
    const shopper = client();
    await shopper.open("/");
    await shopper.addToCart("beans-espresso-1kg");
    const checkout = await shopper.get("/checkout");
    expect(checkout.status).toBe(303);
    expect(checkout.headers.get("location")).toBe("/sign-in?returnTo=%2Fcheckout");

    await shopper.open("/sign-in?returnTo=%2Fcheckout");
    const before = shopper.cookie;
    const signIn = await shopper.postForm("/sign-in", { customerId: "alice", returnTo: "/checkout" });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("location")).toBe("/checkout");
    expect(shopper.cookie).not.toBe(before); // a new session id after sign-in

    const page = await shopper.open("/checkout");
    expect(page.text).toContain("Saved payment method •••• 0001");
    expect(page.text).toContain("Espresso beans, 1 kg"); // the cart survived the sign-in
  });

  it("never redirects off the site after sign-in", async () => {
    const shopper = client();
    await shopper.open("/sign-in");
    const answer = await shopper.postForm("/sign-in", { customerId: "alice", returnTo: "//evil.example/" });
    expect(answer.headers.get("location")).toBe("/");
  });

  it("charges the signed-in customer's cart at the catalogue's prices, then starts a new cart", async () => {
    const shopper = client();
    await shopper.signIn("alice");
    await shopper.addToCart("beans-house-1kg", 2);
    const cartId = await shopper.cartId();

    const charge = await shopper.postJson("/payments/charges", {
      cartId,
      captureMode: "Auto",
      timing: "now",
    });
    expect(charge.status).toBe(201);
    expect(charge.json).toMatchObject({ status: "captured", amount: "49.80", currency: "EUR" });

    // What the service was asked for: the catalogue's total, on Alice's stored token.
    const authorization = shop
      .embedded!.sandbox.authorizations()
      .find((entry) => entry.reference === charge.json.reference);
    expect(authorization).toMatchObject({ amount: "49.80", customerToken: DEMO.tokens.active });

    const order = await shopper.open(`/orders/${charge.json.reference}`);
    expect(order.text).toContain('data-status="captured"');
    expect(order.text).toContain("Paid");
    expect((await shopper.open("/cart")).text).toContain("Your cart is empty."); // paid carts are orders now
  });

  it("lets the browser choose neither the price nor the token", async () => {
    const shopper = client();
    await shopper.signIn("alice");
    await shopper.addToCart("grinder-burr");
    const cartId = await shopper.cartId();

    const withAmount = await shopper.postJson("/payments/charges", { cartId, amount: "0.01" });
    expect(withAmount.status).toBe(400);
    expect(withAmount.json.errors).toEqual([expect.objectContaining({ field: "amount" })]);

    const withToken = await shopper.postJson("/payments/charges", {
      cartId,
      customerToken: DEMO.tokens.revoked,
    });
    expect(withToken.status).toBe(400);
    expect(withToken.json.errors).toEqual([expect.objectContaining({ field: "customerToken" })]);
  });

  it("does not pay for another session's cart", async () => {
    const alice = client();
    await alice.signIn("alice");
    await alice.addToCart("kettle-pour-over");
    const alicesCart = await alice.cartId();

    const emma = client();
    await emma.signIn("emma");
    const answer = await emma.postJson("/payments/charges", { cartId: alicesCart });
    expect(answer.status).toBe(404);
    expect(answer.json.detail).toBe("We could not find your cart.");
  });

  it("answers payment calls without a session's CSRF header with 403, and without a customer with 401", async () => {
    const shopper = client();
    await shopper.open("/");
    const noHeader = await shopper.postJson("/payments/charges", { cartId: "x" }, { csrf: false });
    expect(noHeader.status).toBe(403);
    expect(noHeader.headers.get("content-type")).toMatch(/application\/problem\+json/);

    const signedOut = await shopper.postJson("/payments/charges", { cartId: "x" });
    expect(signedOut.status).toBe(401);
    expect(signedOut.json.detail).toBe("Please sign in to pay.");
  });

  it.each([
    ["chloe", "TOKEN_REVOKED"],
    ["ben", "TOKEN_PENDING"],
    ["dev", "PAYMENT_METHOD_NO_FUNDS"],
  ] as const)("answers %s's decline with the shopper message for %s", async (customerId, reason) => {
    const shopper = client();
    await shopper.signIn(customerId);
    await shopper.addToCart("ground-filter-500g");
    const answer = await shopper.postJson("/payments/charges", {
      cartId: await shopper.cartId(),
      timing: "now",
    });
    expect(answer.status).toBe(422);
    expect(answer.json).toMatchObject({ reason, detail: SHOPPER_MESSAGES[reason], retryable: false });
    // A declined cart stays open, to try again.
    expect((await shopper.open("/cart")).text).toContain("Filter coffee, ground, 500 g");
  });

  it("follows an asynchronous payment to its outcome through webhooks", async () => {
    const shopper = client();
    await shopper.signIn("alice");
    await shopper.addToCart("mug-stoneware", 4);
    const cartId = await shopper.cartId();
    const charge = await shopper.postJson("/payments/charges", {
      cartId,
      captureMode: "Manual",
      timing: "asap",
    });
    expect(charge.status).toBe(201);
    expect(charge.json.status).toBe("pending");

    await shop.embedded!.sandbox.settle(); // the attempt ran and its webhooks were delivered
    const status = await shopper.get(`/payments/charges/${charge.json.authorizationId}`);
    expect(status.json).toMatchObject({ status: "authorized", captureMode: "Manual", amount: "38.00" });
  });

  it("shows a failure that arrives by webhook with its shopper message", async () => {
    const shopper = client();
    await shopper.signIn("dev");
    await shopper.addToCart("beans-house-1kg");
    const charge = await shopper.postJson("/payments/charges", {
      cartId: await shopper.cartId(),
      timing: "asap",
    });
    expect(charge.json.status).toBe("pending");
    await shop.embedded!.sandbox.settle();
    const order = await shopper.open(`/orders/${charge.json.reference}`);
    expect(order.text).toContain('data-status="failed"');
    expect(order.text).toContain(SHOPPER_MESSAGES.PAYMENT_METHOD_NO_FUNDS);
  });

  it("runs a scheduled payment when the demo control moves the sandbox clock", async () => {
    const shopper = client();
    await shopper.signIn("alice");
    await shopper.addToCart("beans-house-1kg");
    const cartId = await shopper.cartId();
    const charge = await shopper.postJson("/payments/charges", {
      cartId,
      timing: "scheduled",
      schedule: "in-5-minutes",
    });
    expect(charge.json.status).toBe("pending");
    const order = await shopper.open(`/orders/${charge.json.reference}`);
    expect(order.text).toContain("Advance the sandbox clock 5 minutes");

    expect((await shopper.postJson("/demo/sandbox-clock", {})).status).toBe(200);
    await shop.embedded!.sandbox.settle();
    const status = await shopper.get(`/payments/charges/${charge.json.authorizationId}`);
    expect(status.json.status).toBe("captured");
  });
});

describe("merchant", () => {
  async function manualOrder(): Promise<{ authorizationId: string; reference: string }> {
    const shopper = client();
    await shopper.signIn("alice");
    await shopper.addToCart("kettle-pour-over"); // 49.00
    const charge = await shopper.postJson("/payments/charges", {
      cartId: await shopper.cartId(),
      captureMode: "Manual",
      timing: "now",
    });
    expect(charge.json.status).toBe("authorized");
    return charge.json;
  }

  it("keeps capture, cancel and refund for the signed-in merchant", async () => {
    const { authorizationId } = await manualOrder();
    const shopper = client();
    await shopper.signIn("alice");
    const asCustomer = await shopper.postJson(`/payments/charges/${authorizationId}/capture`, {});
    expect(asCustomer.status).toBe(403);

    const visitor = client();
    const backOffice = await visitor.get("/merchant");
    expect(backOffice.status).toBe(303);
    expect(backOffice.headers.get("location")).toBe("/merchant/sign-in");
  });

  it("refuses a wrong merchant password", async () => {
    const visitor = client();
    await visitor.open("/merchant/sign-in");
    const answer = await visitor.postForm("/merchant/sign-in", { username: "merchant", password: "guess" });
    expect(answer.status).toBe(401);
    expect(answer.text).toContain("do not match the demo merchant");
  });

  it("captures part, then the rest, then refunds part, reading the amounts from the service", async () => {
    const { authorizationId, reference } = await manualOrder();
    const merchant = client();
    await merchant.open("/merchant/sign-in");
    expect(
      (await merchant.postForm("/merchant/sign-in", { username: "merchant", password: "demo" })).status,
    ).toBe(303);
    const list = await merchant.open("/merchant");
    expect(list.text).toContain(reference);

    const page = await merchant.open(`/merchant/orders/${reference}`);
    expect(page.text).toContain('data-merchant-action="capture"');
    expect(page.text).toContain('data-sequence="1"');

    const partial = await merchant.postJson(`/payments/charges/${authorizationId}/capture`, {
      amount: "20.00",
      sequence: 1,
    });
    expect(partial.json).toMatchObject({ status: "partially_captured", order: { capturedAmount: "20.00" } });
    // The same form sent again (same sequence): nothing is captured twice.
    const again = await merchant.postJson(`/payments/charges/${authorizationId}/capture`, {
      amount: "20.00",
      sequence: 1,
    });
    expect(again.json.order.capturedAmount).toBe("20.00");

    const rest = await merchant.postJson(`/payments/charges/${authorizationId}/capture`, { sequence: 2 });
    expect(rest.json).toMatchObject({ status: "captured", order: { capturedAmount: "49.00" } });
    const refund = await merchant.postJson(`/payments/charges/${authorizationId}/refund`, {
      amount: "9.00",
      sequence: 1,
    });
    expect(refund.json).toMatchObject({ status: "partially_refunded", order: { refundedAmount: "9.00" } });

    const after = await merchant.open(`/merchant/orders/${reference}`);
    expect(after.text).toMatch(/data-role="refunded-amount">€9\.00</);
  });
});

describe("errors", () => {
  it("answers an unknown page with a 404 page that does not echo the address", async () => {
    const answer = await client().get("/<script>alert(1)</script>");
    expect(answer.status).toBe(404);
    expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
    expect(answer.text).toContain("Page not found");
    expect(answer.text).not.toContain("<script>alert");
    expectNoInternals(answer);
  });

  it("shows someone else's order as not found", async () => {
    const alice = client();
    await alice.signIn("alice");
    await alice.addToCart("mug-stoneware");
    const charge = await alice.postJson("/payments/charges", { cartId: await alice.cartId() });

    const emma = client();
    await emma.signIn("emma");
    const answer = await emma.get(`/orders/${charge.json.reference}`);
    expect(answer.status).toBe(404);
    expect(answer.text).toContain("We could not find that order in your account.");
  });

  it("answers a malformed address and an oversized form without internals", async () => {
    const shopper = client();
    const malformed = await shopper.get("/orders/%E0%A4%A");
    expect(malformed.status).toBe(400);
    expectNoInternals(malformed);

    await shopper.open("/");
    const oversized = await shopper.postForm("/cart/items", { sku: "x".repeat(40_000) });
    expect(oversized.status).toBe(413);
    expect(oversized.text).toContain("could not read");
    expectNoInternals(oversized);
  });

  it("escapes what the visitor sends, wherever it is shown", async () => {
    const page = await client().open(
      `/sign-in?returnTo=${encodeURIComponent('/"><script>alert(1)</script>')}`,
    );
    expect(page.text).not.toContain('"><script>alert(1)</script>');
    expect(page.text).toContain("/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  });

  it("answers broken JSON on the payment routes with a problem, not a page or a stack", async () => {
    const shopper = client();
    await shopper.open("/");
    const response = await fetch(new URL("/payments/charges", shop.url), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        cookie: shopper.cookie!,
        "x-csrf-token": shopper.csrfToken,
      },
      body: "{ not json",
    });
    expect(response.status).toBe(400);
    const problem = (await response.json()) as { detail: string };
    expect(problem.detail).toBe("The request body is not valid JSON.");
  });
});
