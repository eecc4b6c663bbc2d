// The shop of the crash test, as its own process so the test can SIGKILL it: the built router on a
// PostgreSQL store, the shop's customers and carts read from a file (its "database"), listening on
// a fixed port so the sandbox's webhooks and the shoppers find it again after every restart.
// Plain JavaScript on the package's dist: started with `node`, no loader in between.

import { readFileSync } from "node:fs";
import express from "express";
import pg from "pg";
import { PostgresChargeStore, purchaseAuth, purchaseAuthErrorHandler } from "../../dist/index.js";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const shop = JSON.parse(readFileSync(env("SHOP_FILE"), "utf8"));
const customers = new Map(shop.customers.map((customer) => [customer.session, customer]));
const carts = new Map(Object.entries(shop.carts));

// As the README says: a pool that survives the database restarting, and a store migrated at start.
const pool = new pg.Pool({ connectionString: env("DATABASE_URL"), options: env("PG_OPTIONS"), max: 8 });
pool.on("error", () => {});
const store = new PostgresChargeStore({ pool });
await store.migrate();

const router = purchaseAuth({
  clientOptions: {
    baseUrl: env("SANDBOX_URL"),
    clientId: env("CLIENT_ID"),
    clientSecret: env("CLIENT_SECRET"),
    scope: env("SCOPE"),
    retryBaseDelayMs: 5,
    retryMaxDelayMs: 50,
    timeoutMs: 2_000,
    // Fewer retries inside one send let more of the faults reach the back office as a 5xx.
    ...(process.env.CLIENT_MAX_RETRIES ? { maxRetries: Number(process.env.CLIENT_MAX_RETRIES) } : {}),
  },
  store,
  webhookSecret: env("WEBHOOK_SECRET"),
  timing: "now",
  allowedTimings: ["now", "asap"],
  captureMode: process.env.CAPTURE_MODE ?? "Auto",
  // The merchant routes, for the merchant crash test: its staff key in a header.
  ...(process.env.MERCHANT_KEY
    ? { authorizeMerchant: (req) => req.get("x-merchant-key") === process.env.MERCHANT_KEY }
    : {}),
  reconcileIntervalMs: 250,
  // Short enough that the reconciler settles a lost merchant write within a test (it waits
  // `timeoutMs` after a write's last send); the router's defaults otherwise.
  ...(process.env.ROUTER_TIMEOUT_MS ? { timeoutMs: Number(process.env.ROUTER_TIMEOUT_MS) } : {}),
  ...(process.env.RESEND_WINDOW_MS ? { resendWindowMs: Number(process.env.RESEND_WINDOW_MS) } : {}),
  // One line per alert on stdout, for the test to count (processes.ts reads them).
  onAlert: (alert) => {
    process.stdout.write(`alert ${JSON.stringify(alert)}\n`);
  },
  logger: {},
  resolveCustomer: (req) => customers.get(req.get("x-session") ?? "") ?? null,
  buildOrder: (req, { cartId }) => {
    const cart = carts.get(cartId);
    if (!cart || cart.customerId !== req.purchaseAuth?.customer?.customerId) {
      return Promise.reject(Object.assign(new Error("no such cart"), { status: 404 }));
    }
    return { reference: cart.reference, currency: "EUR", items: cart.items };
  },
});

const app = express();
app.use("/payments", router);
app.use(purchaseAuthErrorHandler({ logger: {} }));
const server = app.listen(Number(env("PORT")), "127.0.0.1", () => {
  process.stdout.write("ready\n");
});
server.on("error", (error) => {
  process.stderr.write(`listen failed: ${error.message}\n`);
  process.exit(3);
});
