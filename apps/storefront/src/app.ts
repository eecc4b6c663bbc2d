import { fileURLToPath } from "node:url";
import type { Logger, PurchaseAuthClientOptions } from "@purchase-auth/core";
import { type PurchaseAuthRouter, purchaseAuthErrorHandler } from "@purchase-auth/express";
import express, { type Express, type RequestHandler } from "express";
import { requireCsrfForPages, requireCsrfForPayments } from "./http/csrf.js";
import { errorPage, notFoundPage } from "./http/errors.js";
import { securityHeaders } from "./http/security-headers.js";
import { SessionStore, sessions } from "./http/sessions.js";
import { createPayments } from "./payments.js";
import { accountRoutes } from "./routes/account.js";
import { checkoutRoutes } from "./routes/checkout.js";
import { demoClockRoutes } from "./routes/demo-clock.js";
import { merchantRoutes } from "./routes/merchant.js";
import { merchantSubscriptionRoutes } from "./routes/merchant-subscriptions.js";
import { orderRoutes } from "./routes/orders.js";
import { shopRoutes } from "./routes/shop.js";
import { subscriptionRoutes } from "./routes/subscriptions.js";
import { CartBook } from "./shop/carts.js";
import { OrderBook } from "./shop/orders.js";
import { SubscriptionBook } from "./shop/subscriptions.js";
import type { DemoClock, PaymentsMode, ShopContext } from "./shop-context.js";
import { RenewalJob } from "./subscriptions/renewal-job.js";

/** Stylesheet and browser scripts: src/public when run from source, dist/public once built. */
const PUBLIC_DIR = fileURLToPath(new URL("./public/", import.meta.url));

export interface StorefrontAppOptions {
  /** Where and how to reach the Purchase Authorization Service. */
  clientOptions: PurchaseAuthClientOptions;
  /** The secret(s) the service signs its webhooks with. */
  webhookSecret: string | string[];
  paymentsMode: PaymentsMode;
  /** Only on the embedded sandbox: enables the "advance the sandbox clock" demo control. */
  demoClock?: DemoClock;
  /** How often the renewal job looks for due subscriptions (real time); 0 = only when asked. Default 10 s. */
  renewalIntervalMs?: number;
  logger?: Logger;
}

export interface StorefrontApp {
  app: Express;
  shop: ShopContext;
  payments: PurchaseAuthRouter;
  /** Stops the renewal job, ends open live-update streams and closes the payment client. */
  close(): Promise<void>;
}

/** The shop as an Express app, not yet listening. */
export function createStorefrontApp(options: StorefrontAppOptions): StorefrontApp {
  const logger = options.logger ?? {};
  const carts = new CartBook();
  const orders = new OrderBook();
  const payments = createPayments({
    clientOptions: options.clientOptions,
    webhookSecret: options.webhookSecret,
    carts,
    orders,
    logger,
  });
  // The service's clock: the embedded sandbox's virtual one (moved by the demo control), or real time.
  const demoClock = options.demoClock;
  const now = demoClock ? () => demoClock.now() : () => Date.now();
  const subscriptions = new SubscriptionBook();
  const renewals = new RenewalJob({
    subscriptions,
    orders,
    charges: payments.store,
    client: payments.client,
    reconcile: () => payments.reconcile(),
    now,
    logger,
  });
  renewals.start(options.renewalIntervalMs ?? 10_000);
  const shop: ShopContext = {
    sessions: new SessionStore(),
    carts,
    orders,
    charges: payments.store,
    client: payments.client,
    paymentsMode: options.paymentsMode,
    ...(demoClock ? { demoClock } : {}),
    now,
    subscriptions,
    renewals,
  };
  const withSession = sessions(shop.sessions);

  const app = express();
  app.disable("x-powered-by");
  app.use(securityHeaders());
  app.use("/assets", express.static(PUBLIC_DIR, { index: false, maxAge: "10m" }));

  // The payment routes come before any body parser: the middleware verifies webhooks on their raw
  // bytes. Webhooks come from the service, not a browser, so they need no session and no CSRF token:
  // their signature is checked instead. Everything else here is called by the shop's own pages.
  app.use(
    "/payments",
    exceptWebhooks(withSession),
    exceptWebhooks(requireCsrfForPayments()),
    payments,
    purchaseAuthErrorHandler({ logger }), // problems (JSON) for the guards above, too
  );

  app.use(withSession);
  app.use(express.urlencoded({ extended: false, limit: "16kb" }));
  app.use(requireCsrfForPages());
  app.use(shopRoutes(shop));
  app.use(accountRoutes(shop));
  app.use(checkoutRoutes(shop));
  app.use(orderRoutes(shop));
  app.use(merchantRoutes(shop));
  app.use(subscriptionRoutes(shop));
  app.use(merchantSubscriptionRoutes(shop));
  if (shop.demoClock) app.use(demoClockRoutes(shop.demoClock, renewals));
  app.use(notFoundPage(shop));
  app.use(errorPage(shop, logger));

  return {
    app,
    shop,
    payments,
    async close() {
      await renewals.stop();
      await payments.close();
    },
  };
}

function exceptWebhooks(handler: RequestHandler): RequestHandler {
  return (req, res, next) => (req.path === "/webhooks" ? next() : handler(req, res, next));
}
