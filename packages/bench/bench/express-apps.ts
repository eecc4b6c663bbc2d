import {
  type AuthorizationRequestInput,
  type ItemInput,
  idempotencyKeyFor,
  PurchaseAuthClient,
} from "@purchase-auth/core";
import { MemoryChargeStore, purchaseAuth } from "@purchase-auth/express";
import express, { type Express } from "express";
import type { ShopCredentials } from "./wire.js";

// The two Express apps of row 6. Both get the same request from the load generator
// (`POST <path>`, `x-session: demo`, body `{"cartId":"…"}`, unique per request), charge the same
// one-item order with a reference made from the cart id, over a PurchaseAuthClient built the same
// way, with the same derived idempotency key, and answer 201 with JSON.

export type ExpressVariantName = "adapter" | "bare";

/** Where each app takes the charge request. */
export const CHARGE_PATHS: Record<ExpressVariantName, string> = {
  adapter: "/payments/charges",
  bare: "/charge",
};

/** The cookie-less "session" the load generator sends; resolving it is a map lookup. */
export const SESSION_HEADER = "x-session";
export const SESSION_ID = "demo";

/** The one line of every order: the same as the other rows' body (`wire.ts`), in input form. */
const ITEM: ItemInput = {
  id: "sku-1",
  description: "Coffee beans 1 kg, batch 1",
  unitPrice: "24.90",
  quantity: "2",
  vat: "14",
};

/** The order reference of a cart (≤ 50 characters: cart ids are short). */
export const referenceOf = (cartId: string) => `bench-${cartId}`;

function clientFor(shop: ShopCredentials): PurchaseAuthClient {
  const { baseUrl, clientId, clientSecret, scope } = shop;
  return new PurchaseAuthClient({ baseUrl, clientId, clientSecret, scope });
}

export interface ExpressVariantApp {
  app: Express;
  close(): Promise<void>;
  /** Charges the app has made so far (for the adapter: records in its in-memory store). */
  charges(): number;
}

/**
 * (a) The adapter: `purchaseAuth` mounted at /payments, a `resolveCustomer` that maps the session
 * header to the demo customer, a `buildOrder` that returns the fixed order for the cart, the
 * in-memory store, the default timing "now" (`preferSynchronous`).
 */
export function adapterApp(shop: ShopCredentials): ExpressVariantApp {
  const client = clientFor(shop);
  const store = new MemoryChargeStore();
  const sessions = new Map([
    [SESSION_ID, { customerId: "demo-customer", customerToken: shop.customerToken }],
  ]);
  let charges = 0;
  const router = purchaseAuth({
    client,
    store,
    webhookSecret: "bench-webhook-secret",
    resolveCustomer: (req) => sessions.get(req.get(SESSION_HEADER) ?? "") ?? null,
    buildOrder: (_req, { cartId }) => {
      charges++;
      return { reference: referenceOf(cartId), currency: "EUR", items: [ITEM] };
    },
  });
  const app = express();
  app.use("/payments", router);
  return {
    app,
    close: async () => {
      await router.close();
      await client.close();
    },
    charges: () => charges,
  };
}

/** (b) The bare route: what an application would write by hand around core's client. */
export function bareApp(shop: ShopCredentials): ExpressVariantApp {
  const client = clientFor(shop);
  let charges = 0;
  const app = express();
  app.post(CHARGE_PATHS.bare, express.json(), async (req, res) => {
    charges++;
    const reference = referenceOf((req.body as { cartId: string }).cartId);
    const request: AuthorizationRequestInput = {
      customerToken: shop.customerToken,
      order: { items: [ITEM], currency: "EUR", reference, captureMode: "Auto" },
      attemptSchedule: { preferSynchronous: true },
    };
    const result = await client.authorizations.create(request, {
      idempotencyKey: idempotencyKeyFor(reference, "authorize", 1),
    });
    res.status(201).json(result);
  });
  return { app, close: () => client.close(), charges: () => charges };
}

export const EXPRESS_APPS: Record<ExpressVariantName, (shop: ShopCredentials) => ExpressVariantApp> = {
  adapter: adapterApp,
  bare: bareApp,
};
