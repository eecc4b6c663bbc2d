import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { MedusaContainer } from "@medusajs/framework/types";
import { createUserAccountWorkflow } from "@medusajs/medusa/core-flows";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PURCHASE_AUTH_PROVIDER_ID } from "../src/scripts/seed-store";
import { cartWithCollection, customerWithToken } from "./support/checkout";
import { ensureDashboardBuild, serveDashboard } from "./support/dashboard";
import { draftOrder } from "./support/orders";
import { shopSuite } from "./support/shop-suite";
import { type Api, eventually } from "./support/store-api";

// Issue 13, item 4, in the real Medusa admin dashboard (the 2.21.2 build with the plugin's
// extensions) in Debian's Chromium: the customer page lists the stored tokens with their status read
// from the sandbox, attaches and removes one; the order page shows the service's view of the payment,
// the captured amount to the cent. The admin routes behind the widgets are checked over HTTP first.
// Screenshots go to test/screenshots/.

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = join(process.cwd(), "test", "screenshots");
const ADMIN = { email: "dashboard@example.com", password: "dashboard horse battery staple" };

let dashboardBuild: string;

beforeAll(async () => {
  // `medusa build --admin-only` when the plugin's extensions are newer than the last build.
  dashboardBuild = await ensureDashboardBuild();
}, 600_000);

/** An admin user the browser can log in as (the dashboard's email and password form). */
async function createDashboardUser(api: Api, container: MedusaContainer) {
  const registered = await api.post<{ token: string }>("/auth/user/emailpass/register", ADMIN);
  const payload = JSON.parse(Buffer.from(registered.data.token.split(".")[1]!, "base64url").toString()) as {
    auth_identity_id: string;
  };
  await createUserAccountWorkflow(container).run({
    input: { authIdentityId: payload.auth_identity_id, userData: { email: ADMIN.email } },
  });
}

async function logIn(page: Page, dashboardUrl: string) {
  await page.goto(`${dashboardUrl}/app/login`);
  await page.locator('input[name="email"]').fill(ADMIN.email);
  await page.locator('input[name="password"]').fill(ADMIN.password);
  await page.getByRole("button", { name: "Continue with Email" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/app/login"));
}

// No webhooks from the sandbox until the beforeAll sets them, for the payment declined by webhook.
shopSuite("admin-dashboard", { webhooks: false }, (suite) => {
  const { api, container, sandbox, merchant, shop, store, setWebhooks } = suite;
  let customer: { customerId: string; customerToken: string; headers: Record<string, string> };
  let orderId: string;
  let declinedOrderId: string;
  let dashboard: Awaited<ReturnType<typeof serveDashboard>>;
  let browser: Browser;

  async function placeOrder(headers: Record<string, string>) {
    const { cartId, collectionId } = await cartWithCollection(shop(), headers);
    await api.post(
      `/store/payment-collections/${collectionId}/payment-sessions`,
      { provider_id: PURCHASE_AUTH_PROVIDER_ID, data: {} },
      { headers },
    );
    const completed = await api.post<{ type: string; order: { id: string } }>(
      `/store/carts/${cartId}/complete`,
      {},
      { headers },
    );
    expect(completed.data.type).toBe("order");
    return completed.data.order.id;
  }

  beforeAll(async () => {
    const { admin } = shop();
    await createDashboardUser(api, container());
    // A customer with a stored token pays 79.60 EUR; the merchant captures 30.25 of it.
    customer = await customerWithToken(shop(), "dashboard-customer@example.com");
    orderId = await placeOrder(customer.headers);
    const { data } = await api.get<{
      order: { payment_collections: Array<{ payments: Array<{ id: string }> }> };
    }>(`/admin/orders/${orderId}?fields=*payment_collections.payments`, { headers: admin });
    const paymentId = data.order.payment_collections[0]!.payments[0]!.id;
    await api.post(`/admin/payments/${paymentId}/capture`, { amount: 30.25 }, { headers: admin });

    // Another customer's payment is answered 202 and declined later (no funds), by webhook.
    setWebhooks();
    const declining = await customerWithToken(shop(), "dashboard-declined@example.com", {
      needsChallenge: true,
      funds: "1.00",
    });
    declinedOrderId = await placeOrder(declining.headers);
    await sandbox().settle();
    await eventually(async () => {
      const { data: view } = await api.get<{
        purchase_auth_payments: Array<{ recorded: { failure_reason: string | null } }>;
      }>(`/admin/orders/${declinedOrderId}/purchase-auth`, { headers: admin });
      return view.purchase_auth_payments[0]?.recorded.failure_reason ?? undefined;
    });

    dashboard = await serveDashboard(dashboardBuild, api.defaults.baseURL);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
  });

  const serviceOrder = () => {
    const [paid] = sandbox().authorizations({
      merchantId: merchant().merchantId,
      customerToken: customer.customerToken,
    });
    return sandbox()
      .orders()
      .find((o) => o.orderId === paid?.orderId);
  };

  describe("the admin routes behind the widgets", () => {
    it("list the customer's tokens with their status read from the service", async () => {
      const { data } = await api.get<{ customer_tokens: Array<Record<string, unknown>> }>(
        `/admin/customers/${customer.customerId}/purchase-auth-tokens?live=true`,
        { headers: shop().admin },
      );
      expect(data.customer_tokens).toEqual([
        expect.objectContaining({
          customer_token: customer.customerToken,
          currency: "EUR",
          provider_id: PURCHASE_AUTH_PROVIDER_ID,
          live_status: "Active",
          live_error: null,
        }),
      ]);
    });

    it("give the service's view of the order's payment, equal to the sandbox's order", async () => {
      const { data } = await api.get<{ purchase_auth_payments: Array<Record<string, unknown>> }>(
        `/admin/orders/${orderId}/purchase-auth`,
        { headers: shop().admin },
      );
      const held = serviceOrder()!;
      expect(held).toMatchObject({ capturedAmount: "30.25", totalAmount: "79.60" });
      expect(data.purchase_auth_payments).toHaveLength(1);
      expect(data.purchase_auth_payments[0]).toMatchObject({
        provider_id: PURCHASE_AUTH_PROVIDER_ID,
        service_error: null,
        service_order: {
          orderId: held.orderId,
          status: held.status,
          totalAmount: "79.60",
          capturedAmount: "30.25",
          refundedAmount: "0.00",
          cancelledAmount: held.cancelledAmount,
        },
        medusa: { kind: "payment", amount: "79.6", currency_code: "eur" },
      });
    });

    it("refuse callers who are not logged in as an admin user", async () => {
      const anonymous = await api.get(`/admin/orders/${orderId}/purchase-auth`, {
        validateStatus: () => true,
      });
      expect(anonymous.status).toBe(401);
    });
  });

  describe("the widgets in the dashboard, in Chromium", () => {
    it("the customer page shows the stored token Active at the service; attach and remove work", async () => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
      await logIn(page, dashboard.url);
      await page.goto(`${dashboard.url}/app/customers/${customer.customerId}`);
      const widget = page.getByTestId("purchase-auth-customer-tokens");
      const rows = widget.getByTestId("purchase-auth-token");
      await expect.poll(() => rows.count(), { timeout: 60_000 }).toBe(1);
      expect(await rows.first().textContent()).toContain(customer.customerToken.slice(-4));
      expect(await rows.first().getByTestId("purchase-auth-token-status").textContent()).toBe("Active");
      await widget.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, "customer-tokens.png"), fullPage: true });

      // An unknown token is refused with the service's reason, shown in the widget.
      await widget.locator("#purchase-auth-new-token").fill("11111111-2222-4333-8444-555555555555");
      await widget.getByRole("button", { name: "Attach" }).click();
      await expect
        .poll(() => widget.getByTestId("purchase-auth-action-error").textContent())
        .toMatch(/does not know this customer token/);

      // A second token, revoked at the service after it is attached: listed with its live status.
      const second = sandbox().createCustomerToken({ merchantId: merchant().merchantId }).customerToken;
      await widget.locator("#purchase-auth-new-token").fill(second);
      await widget.getByRole("button", { name: "Attach" }).click();
      await expect.poll(() => rows.count()).toBe(2);
      sandbox().setCustomerTokenStatus(second, "Revoked");
      await widget.getByRole("button", { name: "Refresh" }).click();
      const secondRow = rows.filter({ hasText: second.slice(-4) });
      await expect
        .poll(() => secondRow.getByTestId("purchase-auth-token-status").textContent())
        .toBe("Revoked");
      await page.screenshot({ path: join(SCREENSHOTS, "customer-tokens-attached.png"), fullPage: true });

      // Remove it (confirmed in Medusa's prompt): gone from Medusa, cancelled at the service.
      await secondRow.getByRole("button", { name: "Remove" }).click();
      await page.getByRole("button", { name: "Remove", exact: true }).last().click();
      await expect.poll(() => rows.count()).toBe(1);
      const { data } = await api.get<{ customer_tokens: Array<{ customer_token: string }> }>(
        `/admin/customers/${customer.customerId}/purchase-auth-tokens`,
        { headers: shop().admin },
      );
      expect(data.customer_tokens.map((t) => t.customer_token)).toEqual([customer.customerToken]);
      await page.close();
    });

    it("the draft order page charges the customer's saved payment method once, then places the order", async () => {
      const draftId = await draftOrder(
        api,
        shop().admin,
        store(),
        customer.customerId,
        "dashboard-customer@example.com",
      );
      const charges = () =>
        sandbox().authorizations({
          merchantId: merchant().merchantId,
          customerToken: customer.customerToken,
        });
      const before = charges().length;
      const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
      await logIn(page, dashboard.url);
      await page.goto(`${dashboard.url}/app/draft-orders/${draftId}`);
      const widget = page.getByTestId("purchase-auth-draft-charge");
      await widget.getByRole("button", { name: "Charge the customer's saved payment method" }).click();
      const outcome = widget.getByTestId("purchase-auth-draft-charge-outcome");
      await expect.poll(() => outcome.getAttribute("data-tone"), { timeout: 60_000 }).toBe("done");
      expect(await outcome.textContent()).toMatch(/^Charged \d+\.\d{2} EUR\. The draft is now an order\./);
      await page.screenshot({ path: join(SCREENSHOTS, "draft-order-charged.png"), fullPage: true });
      expect(charges()).toHaveLength(before + 1);
      const [charged] = charges().slice(-1);
      expect(await outcome.textContent()).toContain(`Charged ${charged!.amount} EUR`);

      // Pressed again (a double click, a second tab): the first charge is reported, none is added.
      await widget.getByRole("button", { name: "Charge the customer's saved payment method" }).click();
      await expect.poll(() => outcome.textContent()).toContain(`Charged ${charged!.amount} EUR`);
      expect(charges()).toHaveLength(before + 1);
      const { data } = await api.get<{ order: { is_draft_order: boolean; status: string } }>(
        `/admin/orders/${draftId}?fields=is_draft_order,status`,
        { headers: shop().admin },
      );
      expect(data.order).toMatchObject({ is_draft_order: false });
      await page.close();
    });

    it("the order page shows the service's view of the payment: 30.25 EUR captured of 79.60", async () => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1400 } });
      await logIn(page, dashboard.url);
      await page.goto(`${dashboard.url}/app/orders/${orderId}`);
      const widget = page.getByTestId("purchase-auth-order");
      const held = serviceOrder()!;
      await expect
        .poll(() => widget.getByTestId("purchase-auth-captured").textContent(), { timeout: 60_000 })
        .toBe(`${held.capturedAmount} EUR`);
      expect(held.capturedAmount).toBe("30.25");
      expect(await widget.getByTestId("purchase-auth-total").textContent()).toBe("79.60 EUR");
      expect(await widget.getByTestId("purchase-auth-medusa-amount").textContent()).toBe("79.60 EUR");
      expect(await widget.getByTestId("purchase-auth-refunded").textContent()).toBe("0.00 EUR");
      expect(await widget.getByTestId("purchase-auth-service-status").textContent()).toBe(held.status);
      expect(await widget.getByTestId("purchase-auth-decline").count()).toBe(0);
      await widget.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, "order-payment.png"), fullPage: true });
      await page.close();
    });

    it("the order page shows an asynchronous decline with its reason", async () => {
      const page = await browser.newPage({ viewport: { width: 1440, height: 1400 } });
      await logIn(page, dashboard.url);
      await page.goto(`${dashboard.url}/app/orders/${declinedOrderId}`);
      const widget = page.getByTestId("purchase-auth-order");
      await expect
        .poll(() => widget.getByTestId("purchase-auth-decline").textContent(), { timeout: 60_000 })
        .toBe("Declined: PAYMENT_METHOD_NO_FUNDS: The payment method has insufficient funds.");
      expect(await widget.getByTestId("purchase-auth-recorded-state").textContent()).toMatch(
        /^failed \(session .*no payment yet\)/,
      );
      expect(await widget.getByTestId("purchase-auth-service-status").textContent()).toBe(
        "No order at the service",
      );
      expect(await widget.getByTestId("purchase-auth-medusa-amount").textContent()).toBe("79.60 EUR");
      expect(await widget.getByTestId("purchase-auth-total").textContent()).toBe("–");
      expect(await widget.getByTestId("purchase-auth-captured").textContent()).toBe("–");
      await widget.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SCREENSHOTS, "order-declined.png"), fullPage: true });
      await page.close();
    });
  });
});
