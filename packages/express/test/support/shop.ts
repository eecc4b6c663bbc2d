import { randomBytes, randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type CreateCustomerTokenInput,
  type MerchantCredentials,
  type SandboxServer,
  startSandbox,
} from "@purchase-auth/sandbox";
import express from "express";
import { request } from "undici";
import { afterAll, afterEach, beforeAll } from "vitest";
import {
  type BuiltOrder,
  HttpProblem,
  type PurchaseAuthOptions,
  type PurchaseAuthRouter,
  purchaseAuth,
  purchaseAuthErrorHandler,
} from "../../src/index.js";
import type { ChargeStore } from "../../src/stores/types.js";

// A real shop for the tests: an Express app with sessions, carts and a server-side price list,
// the router mounted under /payments, listening on 127.0.0.1, charging a real sandbox.

/** The shop's price list: the only source of prices. */
export const PRICES: Record<string, { description: string; unitPrice: string; vat: number }> = {
  "beans-1kg": { description: "Coffee beans 1 kg", unitPrice: "24.90", vat: 14 },
  grinder: { description: "Burr grinder", unitPrice: "89.00", vat: 25 },
};

export const MERCHANT_KEY = "merchant-staff-key";
export const WEBHOOK_SECRET = "whsec_express_tests_0123456789";

/** Response bodies are read loosely in assertions; the assertions themselves are the type check. */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Json = any;

export interface Customer {
  customerId: string;
  customerToken: string;
  /** The session id the browser presents (header x-session). */
  session: string;
}

interface Cart {
  customerId: string;
  reference: string;
  currency: string;
  lines: Array<{ sku: string; quantity: number }>;
}

/** The app's own data (its database): shared by every instance of the app. */
export interface ShopData {
  sandbox: SandboxServer;
  merchant: MerchantCredentials;
  customers: Map<string, Customer>;
  carts: Map<string, Cart>;
  /** A customer with a new customer token at the sandbox. */
  customer(token?: Omit<CreateCustomerTokenInput, "merchantId">): Customer;
  /** A cart of `customer`'s; returns its id. */
  cart(customer: Customer, lines?: Cart["lines"], currency?: string): string;
  /** The order reference the app derives from a cart. */
  referenceOf(cartId: string): string;
}

export function createShopData(sandbox: SandboxServer): ShopData {
  const merchant = sandbox.createMerchant();
  const customers = new Map<string, Customer>();
  const carts = new Map<string, Cart>();
  return {
    sandbox,
    merchant,
    customers,
    carts,
    customer(token = {}) {
      const { customerToken } = sandbox.createCustomerToken({ merchantId: merchant.merchantId, ...token });
      const customer = { customerId: `customer-${randomUUID()}`, customerToken, session: randomUUID() };
      customers.set(customer.session, customer);
      return customer;
    },
    cart(customer, lines = [{ sku: "beans-1kg", quantity: 2 }], currency = "EUR") {
      const cartId = `cart-${randomBytes(5).toString("hex")}`;
      carts.set(cartId, { customerId: customer.customerId, reference: `order-${cartId}`, currency, lines });
      return cartId;
    },
    referenceOf(cartId) {
      return carts.get(cartId)!.reference;
    },
  };
}

export interface ShopApp {
  url: string;
  router: PurchaseAuthRouter;
  /** Webhook events handed to onEvent, in order. */
  appliedEvents: Array<{ id: string; type: string }>;
  /** Errors the router passed on to the app's own error handler (next(err)). */
  appErrors: unknown[];
  /** Lines the router logged at error level (unless the test gave its own logger). */
  errorLogs: unknown[][];
  close(): Promise<void>;
}

export type AppOptions = Partial<Omit<PurchaseAuthOptions, "clientOptions">> & {
  clientOptions?: Partial<NonNullable<PurchaseAuthOptions["clientOptions"]>>;
  /** Register this app's /payments/webhooks at the sandbox (default true). */
  receiveWebhooks?: boolean;
  /** The app's own middleware before the router is mounted (a rate limiter, say). */
  beforeRouter?: (app: express.Express) => void;
  /** The app's own mounts after the router (the separately mounted merchant routes, say). */
  afterRouter?: (app: express.Express, router: PurchaseAuthRouter) => void;
  /** Listen on this port (a restart where the webhooks already point); default any free one. */
  port?: number;
};

/** Starts one instance of the shop. */
export async function startShopApp(data: ShopData, options: AppOptions = {}): Promise<ShopApp> {
  const { clientOptions, receiveWebhooks = true, beforeRouter, afterRouter, port = 0, ...rest } = options;
  const appliedEvents: ShopApp["appliedEvents"] = [];
  const appErrors: unknown[] = [];
  const errorLogs: unknown[][] = [];
  const router = purchaseAuth({
    // Quiet tests, but every error line is kept for assertions.
    logger: { error: (...args: unknown[]) => errorLogs.push(args) },
    // The app's own client when a test gives one; otherwise options for the router's.
    ...(rest.client !== undefined
      ? {}
      : {
          clientOptions: {
            baseUrl: data.sandbox.url,
            clientId: data.merchant.clientId,
            clientSecret: data.merchant.clientSecret,
            scope: data.merchant.scope,
            retryBaseDelayMs: 5,
            retryMaxDelayMs: 50,
            ...clientOptions,
          },
        }),
    // Session-ish: the app's authentication decides who pays, never the request body.
    resolveCustomer: (req) => data.customers.get(req.get("x-session") ?? "") ?? null,
    buildOrder: (req, input): BuiltOrder => {
      const cart = data.carts.get(input.cartId);
      // The customer the router resolved for this request (typed by declaration merging).
      const customer = req.purchaseAuth?.customer;
      if (!cart || cart.customerId !== customer?.customerId) {
        throw new HttpProblem({ status: 404, title: "Cart not found", detail: "This cart does not exist." });
      }
      return {
        reference: cart.reference,
        currency: cart.currency,
        items: cart.lines.map(({ sku, quantity }) => ({ id: sku, ...PRICES[sku]!, quantity })),
      };
    },
    webhookSecret: WEBHOOK_SECRET,
    onEvent: (event) => {
      appliedEvents.push({ id: event.id, type: event.type });
    },
    ...rest,
  });
  const app = express();
  beforeRouter?.(app);
  app.use("/payments", router);
  afterRouter?.(app, router);
  // What the README tells an app to do: its own error handler after the router; here it records
  // what reached it, then answers as a problem.
  const answer = purchaseAuthErrorHandler({ logger: {} });
  app.use(((error, req, res, next) => {
    appErrors.push(error);
    answer(error, req, res, next);
  }) as express.ErrorRequestHandler);
  const server = await listen(app, port);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  if (receiveWebhooks) {
    data.sandbox.setWebhooks({
      merchantId: data.merchant.merchantId,
      urls: [`${url}/payments/webhooks`],
      secrets: [WEBHOOK_SECRET],
    });
  }
  return {
    url,
    router,
    appliedEvents,
    appErrors,
    errorLogs,
    async close() {
      await router.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** Lets merchant staff in: the header carries the app's staff key. */
export const staffOnly = (req: express.Request) => req.get("x-merchant-key") === MERCHANT_KEY;

function listen(app: express.Express, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, "127.0.0.1", (error?: Error) =>
      error ? reject(error) : resolve(server),
    );
  });
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Json;
}

export interface CallOptions {
  customer?: Customer;
  merchant?: boolean;
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

/** One HTTP request to an app, as a browser (or the merchant's back office) would send it. */
export async function call(app: { url: string }, method: string, path: string, options: CallOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.customer) headers["x-session"] = options.customer.session;
  if (options.merchant) headers["x-merchant-key"] = MERCHANT_KEY;
  let body = options.rawBody;
  if (body === undefined && options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await request(`${app.url}/payments${path}`, {
    method: method as "POST",
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.body.text();
  let json: Json;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json } satisfies Reply;
}

/** POST /charges for a cart. */
export function charge(app: { url: string }, customer: Customer, body: Record<string, unknown>) {
  return call(app, "POST", "/charges", { customer, body });
}

/**
 * The usual set-up of a test file: one sandbox for the file, shop apps that are closed (and webhook
 * delivery switches reset) after each test.
 */
export function useShops() {
  let sandbox: SandboxServer | undefined;
  const apps: ShopApp[] = [];
  const current = (): SandboxServer => {
    if (sandbox === undefined) throw new Error("The sandbox starts in beforeAll");
    return sandbox;
  };
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox?.close());
  afterEach(async () => {
    sandbox?.setWebhookDelivery({ duplicate: false, outOfOrder: false });
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  /** A new merchant's shop data and an app for it, closed after the test. */
  const shop = async (options: AppOptions = {}) => {
    const data = createShopData(current());
    const app = await startShopApp(data, options);
    apps.push(app);
    return { data, app };
  };
  return {
    sandbox: current,
    shop,
    /**
     * A shop on `store` whose reconciler runs only when the test calls it, with no webhooks and one
     * retry per call: what happens is what a reconcile pass does.
     */
    reconcilingShop: (store: ChargeStore) =>
      shop({ store, receiveWebhooks: false, reconcileIntervalMs: 0, clientOptions: { maxRetries: 1 } }),
  };
}
