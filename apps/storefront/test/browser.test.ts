/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { join } from "node:path";
import { SHOPPER_MESSAGES } from "@purchase-auth/express";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type Chromium,
  findChromium,
  INSTALL_HINT,
  inCi,
  launchChromium,
  screenshotDirectory,
  whereChromiumWasLooked,
} from "./support/chromium.js";
import { startTestStorefront, type TestStorefront } from "./support/storefront.js";

// End to end in a real Chromium: what a shopper and a merchant see and click. Every wait is on a
// condition in the page (Playwright's auto-waiting), never on time. Screenshots of each step go to
// apps/storefront/test-results/screenshots/.

const executablePath = findChromium();
const skip = executablePath === undefined && !inCi();
if (skip) {
  console.warn(
    `\n⚠️  storefront browser tests SKIPPED: no Chromium at ${whereChromiumWasLooked()}.\n` +
      `   Install it with: ${INSTALL_HINT}   (or set CHROMIUM_PATH). Under CI=true a missing Chromium fails.\n`,
  );
}

describe.skipIf(skip)("the storefront in Chromium", () => {
  let shop: TestStorefront;
  let browser: Chromium;
  let shots: string;
  let page: Page;

  beforeAll(async () => {
    if (executablePath === undefined) {
      throw new Error(
        `CI needs Chromium for the browser tests: ${INSTALL_HINT} (looked at ${whereChromiumWasLooked()})`,
      );
    }
    shots = screenshotDirectory();
    [shop, browser] = await Promise.all([startTestStorefront(), launchChromium(executablePath)]);
  });

  afterAll(async () => {
    await browser?.close();
    await shop?.close();
  });

  beforeEach(async () => {
    // Each scenario starts signed out, with an empty cart.
    await browser.context.clearCookies();
    page = await browser.context.newPage();
    page.setDefaultTimeout(10_000);
  });

  afterEach(async () => {
    await page.close();
  });

  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const url = (path: string) => new URL(path, shop.url).toString();

  async function signInAs(customerId: string): Promise<void> {
    await page.goto(url("/sign-in"));
    await page.click(`button[name="customerId"][value="${customerId}"]`);
    await page.waitForSelector(".signed-in");
  }

  async function addToCart(sku: string): Promise<void> {
    await page.goto(url("/"));
    await page.click(`[data-sku="${sku}"] button[type="submit"]`);
    await page.waitForSelector(".flash--success");
  }

  async function checkout(
    captureMode: "Auto" | "Manual",
    timing: "now" | "asap" | "scheduled",
  ): Promise<void> {
    await page.goto(url("/checkout"));
    await page.check(`input[name="captureMode"][value="${captureMode}"]`);
    await page.check(`input[name="timing"][value="${timing}"]`);
  }

  it("signs in, buys with synchronous auto capture, and shows the order paid", async () => {
    await page.goto(url("/"));
    await shot("01-catalogue");
    await page.goto(url("/sign-in"));
    await shot("02-sign-in-picker");
    await signInAs("alice");

    await addToCart("beans-house-1kg");
    await addToCart("mug-stoneware");
    await page.goto(url("/cart"));
    expect(await page.textContent("[data-cart-total]")).toBe("€34.40");
    await shot("03-cart");

    await checkout("Auto", "now");
    expect(await page.textContent('[data-role="pay-button"]')).toBe("Pay €34.40");
    await shot("04-checkout");
    await page.click('[data-role="pay-button"]');

    await page.waitForURL(/\/orders\/HB-/);
    await page.waitForSelector('#charge-status[data-status="captured"]');
    expect(await page.textContent('#charge-status [data-role="status-label"]')).toBe("Paid");
    await shot("05-order-captured");
  });

  it("buys with asynchronous manual capture, watches it turn authorized without a reload, and the merchant captures it", async () => {
    await signInAs("alice");
    await addToCart("kettle-pour-over");
    await checkout("Manual", "scheduled");
    await page.click('[data-role="pay-button"]');
    await page.waitForURL(/\/orders\/HB-/);
    const orderUrl = page.url();
    const reference = orderUrl.split("/orders/")[1]!;

    await page.waitForSelector('#charge-status[data-status="pending"]');
    await page.waitForSelector('[data-role="live-note"]:not([hidden])'); // the live stream is open
    await shot("06-order-pending-scheduled");

    // From here on the page must not load again: mark it, and count navigations.
    await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));
    let navigations = 0;
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });
    await page.click('[data-role="advance-clock"]'); // demo control: the scheduled attempt runs now
    await page.waitForSelector('#charge-status[data-status="authorized"]');
    expect(await page.textContent('#charge-status [data-role="status-label"]')).toBe("Payment authorized");
    expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);
    expect(navigations).toBe(0);
    expect(await page.isHidden('[data-role="demo-clock"]')).toBe(true);
    await shot("07-order-authorized-live");

    await page.goto(url("/merchant"));
    await page.waitForURL(/\/merchant\/sign-in$/);
    await shot("08-merchant-sign-in");
    await page.click('form[action="/merchant/sign-in"] button[type="submit"]');
    await page.waitForSelector(`tr[data-reference="${reference}"]`);
    await shot("09-merchant-orders");

    await page.click(`tr[data-reference="${reference}"] a`);
    await page.waitForSelector('form[data-merchant-action="capture"]');
    await shot("10-merchant-order-authorized");
    await page.fill('form[data-merchant-action="capture"] input[name="amount"]', "20.00");
    await page.click('form[data-merchant-action="capture"] button[type="submit"]');
    await page.waitForSelector('[data-role="operation-done"]');
    expect(await page.textContent('[data-role="captured-amount"]')).toBe("€20.00");

    await page.click('form[data-merchant-action="capture"] button[type="submit"]'); // empty: the rest
    await page.locator('[data-role="captured-amount"]', { hasText: /^€49\.00$/ }).waitFor();
    expect(await page.textContent('h1 [data-role="status-label"]')).toBe("Paid");
    await shot("11-merchant-order-captured");

    await page.goto(orderUrl);
    await page.waitForSelector('#charge-status[data-status="captured"]');
  });

  it("shows a payment method that needs a challenge turning paid after the webhook", async () => {
    await signInAs("emma");
    await addToCart("grinder-burr");
    await checkout("Auto", "now");
    await page.click('[data-role="pay-button"]');
    await page.waitForURL(/\/orders\/HB-/);
    await page.waitForSelector('#charge-status[data-status="captured"]');
  });

  it("shows the revoked token's decline in words a shopper understands", async () => {
    await signInAs("chloe");
    await addToCart("ground-filter-500g");
    await checkout("Auto", "now");
    await page.click('[data-role="pay-button"]');

    await page.waitForSelector('[data-role="checkout-error"]:not([hidden])');
    expect(await page.textContent('[data-role="checkout-error-message"]')).toBe(
      SHOPPER_MESSAGES.TOKEN_REVOKED,
    );
    expect(await page.isVisible('[data-role="checkout-error-hint"]')).toBe(true);
    expect(page.url()).toBe(url("/checkout"));
    await shot("12-checkout-declined-revoked");
  });

  it("shows a decline that arrives by webhook, live, with its readable reason", async () => {
    await signInAs("dev");
    await addToCart("beans-espresso-1kg");
    await checkout("Auto", "asap");
    await page.click('[data-role="pay-button"]');
    await page.waitForURL(/\/orders\/HB-/);
    await page.waitForSelector('#charge-status[data-status="failed"]');
    expect(await page.textContent('#charge-status [data-role="reason-message"]')).toBe(
      SHOPPER_MESSAGES.PAYMENT_METHOD_NO_FUNDS,
    );
    await shot("13-order-failed-no-funds");

    // The failed order's items go back into a cart, and checkout is one click away.
    await page.click('[data-role="try-again"] button[type="submit"]');
    await page.waitForURL(/\/checkout$/);
    expect(await page.textContent('[data-role="pay-button"]')).toBe("Pay €27.50");
    expect(await page.isVisible(".flash--success")).toBe(true);
    await shot("13b-checkout-after-try-again");
  });

  it("lets the merchant correct a refused refund without reloading the page", async () => {
    await signInAs("alice");
    await addToCart("mug-stoneware");
    await checkout("Auto", "now");
    await page.click('[data-role="pay-button"]');
    await page.waitForSelector('#charge-status[data-status="captured"]');
    const reference = page.url().split("/orders/")[1]!;

    await page.goto(url("/merchant"));
    await page.click('form[action="/merchant/sign-in"] button[type="submit"]');
    await page.click(`tr[data-reference="${reference}"] a`);
    const refund = 'form[data-merchant-action="refund"]';
    await page.waitForSelector(refund);
    // Never pre-filled: a refund is an amount the merchant chooses.
    expect(await page.inputValue(`${refund} input[name="amount"]`)).toBe("");
    expect(await page.textContent('[data-role="service-status"]')).toBe("Fully captured");

    await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));
    await page.fill(`${refund} input[name="amount"]`, "999.00"); // more than was captured: refused
    await page.click(`${refund} button[type="submit"]`);
    await page.waitForSelector('[data-role="merchant-error"]:not([hidden])');
    await shot("15-merchant-refund-refused");
    expect(await page.evaluate(() => (globalThis as { sameDocument?: boolean }).sameDocument)).toBe(true);

    await page.fill(`${refund} input[name="amount"]`, "2.00");
    await page.click(`${refund} button[type="submit"]`);
    await page.waitForSelector('[data-role="operation-done"]');
    expect(await page.textContent('[data-role="refunded-amount"]')).toBe("€2.00");
  });

  it("after a lost answer, never offers Pay again: it links to the order, which learns the outcome", async () => {
    const sandbox = shop.embedded!.sandbox;
    await signInAs("alice");
    await addToCart("mug-stoneware");
    await checkout("Auto", "now");
    // Every answer to the create call is lost after it was processed: the outcome is unknown.
    sandbox.injectFault({
      kind: "drop_after_commit",
      count: 10,
      match: { path: "/purchase/authorizations" },
    });
    await page.click('[data-role="pay-button"]');
    await page.waitForSelector('[data-role="confirming-order-link"]');
    expect(await page.isDisabled('[data-role="pay-button"]')).toBe(true);
    await shot("16-checkout-confirming");
    sandbox.clearFaults();

    await page.click('[data-role="confirming-order-link"]');
    await page.waitForURL(/\/orders\/HB-/);
    // The webhook has usually told the shop by now; otherwise "Check again" sends the same request
    // with the same key.
    const checkAgain = page.locator('[data-role="check-again"]');
    if (await checkAgain.isVisible()) await checkAgain.click();
    await page.waitForSelector('#charge-status[data-status="captured"]');
    // Charged once, although the shop's first answer was lost.
    const reference = page.url().split("/orders/")[1]!;
    expect(sandbox.authorizations().filter((each) => each.reference === reference)).toHaveLength(1);
  });

  it("re-orders a paid order every month: the renewal shows after the demo clock moves a month", async () => {
    await signInAs("alice");
    await addToCart("beans-house-1kg");
    await checkout("Auto", "now");
    await page.click('[data-role="pay-button"]');
    await page.waitForSelector('#charge-status[data-status="captured"]');
    await page.click('[data-role="reorder"] button[type="submit"]');
    await page.waitForURL(/\/subscriptions$/);
    const subscription = page.locator('[data-status="active"][data-subscription-id]').first();
    const id = await subscription.getAttribute("data-subscription-id");
    await shot("17-subscription-started");

    await page.click('[data-role="advance-month"]'); // demo control: the clock moves, the job runs
    await page.waitForSelector(`[data-subscription-id="${id}"] tr[data-period="1"][data-status="charged"]`);
    expect(await page.isVisible(".flash--info")).toBe(true);
    await shot("18-subscription-renewed");

    await page.click(`[data-subscription-id="${id}"] tr[data-period="1"] a`);
    await page.waitForSelector('#charge-status[data-status="captured"]');
    expect(await page.isVisible('[data-role="subscription-link"]')).toBe(true);

    await page.goto(url("/merchant/subscriptions"));
    await page.click('form[action="/merchant/sign-in"] button[type="submit"]');
    await page.goto(url("/merchant/subscriptions"));
    await page.waitForSelector(`tr[data-item-id="${id}-P01"][data-status="charged"]`);
    await shot("19-merchant-subscriptions");
  });

  it("fits a phone: no page scrolls sideways at 390 × 844", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    // Sideways: the page itself, or any element that reaches past the screen's right edge (a table
    // cut off inside its card counts too).
    const overflowOf = () =>
      page.evaluate(() => {
        const width = document.documentElement.clientWidth;
        const page = document.documentElement.scrollWidth - width;
        const sticksOut = [...document.querySelectorAll("main *")].map((element) => {
          const box = element.getBoundingClientRect();
          return box.width > 1 ? Math.ceil(box.right - width) : 0;
        });
        return Math.max(page, ...sticksOut);
      });
    const pages: Array<[string, string]> = [];
    const visit = async (name: string) => {
      await page.waitForLoadState("load");
      await page.screenshot({ path: join(shots, `phone-${name}.png`), fullPage: true });
      pages.push([name, String(await overflowOf())]);
    };
    await page.goto(url("/"));
    await visit("catalogue");
    await signInAs("alice");
    await addToCart("beans-house-1kg");
    await addToCart("kettle-pour-over");
    await page.goto(url("/cart"));
    await visit("cart");
    await checkout("Manual", "now");
    await visit("checkout");
    await page.click('[data-role="pay-button"]');
    await page.waitForSelector('#charge-status[data-status="authorized"]');
    const reference = page.url().split("/orders/")[1]!;
    await visit("order");
    await page.goto(url("/orders"));
    await visit("orders");
    await page.goto(url("/subscriptions"));
    await visit("subscriptions");
    await page.goto(url("/merchant"));
    await page.click('form[action="/merchant/sign-in"] button[type="submit"]');
    await page.waitForSelector(`tr[data-reference="${reference}"]`);
    await visit("merchant-orders");
    await page.goto(url("/merchant/subscriptions"));
    await visit("merchant-subscriptions");
    await page.goto(url("/merchant"));
    await page.click(`tr[data-reference="${reference}"] a`);
    await page.waitForSelector('form[data-merchant-action="capture"]');
    await visit("merchant-order");
    expect(pages.filter(([, overflow]) => Number(overflow) > 0)).toEqual([]);
  });

  it("shows a friendly 404 page", async () => {
    const response = await page.goto(url("/no-such-page"));
    expect(response?.status()).toBe(404);
    await page.waitForSelector(".error-page");
    await shot("14-not-found");
  });
});
