import { DEMO_MERCHANT } from "./routes/merchant.js";
import { DEMO_CUSTOMERS, maskedToken } from "./shop/customers.js";
import type { RunningStorefront } from "./storefront.js";

/** What `pnpm start` prints: where the shop is, where payments go, and whom to sign in as. */
export function startupBanner(running: RunningStorefront): string {
  const { url, webhookUrl, paymentsMode } = running;
  const nameWidth = Math.max(...DEMO_CUSTOMERS.map((customer) => customer.name.length));
  const stateWidth = Math.max(...DEMO_CUSTOMERS.map((customer) => customer.tokenState.label.length));
  const lines = [
    `Harbour & Bean storefront running at ${url}`,
    "",
    paymentsMode.kind === "embedded-sandbox"
      ? `Payments: the embedded sandbox at ${paymentsMode.url} (simulated service, demo data, nothing real is charged)`
      : `Payments: the service at ${paymentsMode.url}`,
    paymentsMode.kind === "embedded-sandbox"
      ? `  webhooks are delivered to ${webhookUrl}`
      : `  register ${webhookUrl} as the webhook URL at the service, with PURCHASE_AUTH_WEBHOOK_SECRET`,
    "",
    `Demo customers (sign in at ${url}/sign-in), each with a saved payment method:`,
    ...DEMO_CUSTOMERS.map(
      (customer) =>
        `  ${customer.name.padEnd(nameWidth)}  ${maskedToken(customer.customerToken)}  ${customer.tokenState.label.padEnd(stateWidth)}  ${customer.tokenState.outcome}`,
    ),
    "",
    `Demo merchant back office: ${url}/merchant (user "${DEMO_MERCHANT.username}", password "${DEMO_MERCHANT.password}")`,
    "",
    "Ctrl-C to stop",
  ];
  return lines.join("\n");
}
