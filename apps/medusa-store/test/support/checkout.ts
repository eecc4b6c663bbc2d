import type { AuthorizationView, SandboxServer } from "@purchase-auth/sandbox";
import { expect } from "vitest";
import { PURCHASE_AUTH_PROVIDER_ID } from "../../src/scripts/seed-store";
import type { Api } from "./store-api";
import { eventually, registerCustomer } from "./store-api";

export interface Shop {
  api: Api;
  sandbox: SandboxServer;
  merchantId: string;
  admin: Record<string, string>;
  publishableKey: string;
  regionId: string;
  variantId: string;
  shippingOptionId: string;
}

export const ADDRESS = {
  first_name: "Greta",
  last_name: "Garbo",
  address_1: "Drottninggatan 1",
  city: "Stockholm",
  country_code: "se",
  postal_code: "11151",
};

/** A registered, logged-in customer with a fresh customer token the admin attached. */
export async function customerWithToken(
  shop: Shop,
  email: string,
  token: { needsChallenge?: boolean; funds?: string } = {},
) {
  const customer = await registerCustomer(shop.api, shop.publishableKey, email);
  const customerToken = shop.sandbox.createCustomerToken({
    merchantId: shop.merchantId,
    ...token,
  }).customerToken;
  const attached = await shop.api.post(
    `/admin/customers/${customer.customerId}/purchase-auth-tokens`,
    { customer_token: customerToken },
    { headers: shop.admin },
  );
  expect(attached.status).toBe(201);
  return { ...customer, customerToken };
}

/** A cart of 3 × 24.90 + 4.90 shipping (79.60 EUR) with its payment collection, made with `headers`. */
export async function cartWithCollection(shop: Shop, headers: Record<string, string>, email?: string) {
  const created = await shop.api.post<{ cart: { id: string } }>(
    "/store/carts",
    {
      region_id: shop.regionId,
      items: [{ variant_id: shop.variantId, quantity: 3 }],
      shipping_address: ADDRESS,
      billing_address: ADDRESS,
      ...(email ? { email } : {}),
    },
    { headers },
  );
  const cartId = created.data.cart.id;
  await shop.api.post(
    `/store/carts/${cartId}/shipping-methods`,
    { option_id: shop.shippingOptionId },
    { headers },
  );
  const collection = await shop.api.post<{ payment_collection: { id: string } }>(
    "/store/payment-collections",
    { cart_id: cartId },
    { headers },
  );
  return { cartId, collectionId: collection.data.payment_collection.id };
}

export interface MedusaPayment {
  id: string;
  amount: number;
  data: Record<string, unknown>;
  captured_at: string | null;
  canceled_at: string | null;
  captures?: Array<{ amount: number }>;
  refunds?: Array<{ amount: number }>;
}

export interface MedusaOrderPayments {
  id: string;
  status: string;
  metadata: Record<string, unknown> | null;
  payment_collections: Array<{
    id: string;
    status: string;
    payments: MedusaPayment[];
    payment_sessions: Array<{ id: string; status: string; data: Record<string, unknown> }>;
  }>;
}

export async function orderWithPayments(shop: Shop, orderId: string): Promise<MedusaOrderPayments> {
  const fields = [
    "id",
    "status",
    "metadata",
    "*payment_collections",
    "*payment_collections.payments",
    "*payment_collections.payments.captures",
    "*payment_collections.payments.refunds",
    "*payment_collections.payment_sessions",
  ].join(",");
  const { data } = await shop.api.get<{ order: MedusaOrderPayments }>(
    `/admin/orders/${orderId}?fields=${fields}`,
    {
      headers: shop.admin,
    },
  );
  return data.order;
}

/**
 * The order once its first payment session's data reads `state: sessionState` (and, if given, its
 * collection reads `collectionStatus`). A webhook is followed by two subscribers, Medusa's (the
 * session's data) and the plugin's (the order and the collection), each writing on its own: a test
 * waits for the last write it reads, not for the first one it sees.
 */
export function orderOnceFollowed(
  shop: Shop,
  orderId: string,
  until: { sessionState: string; collectionStatus?: string },
): Promise<MedusaOrderPayments> {
  return eventually(async () => {
    const found = await orderWithPayments(shop, orderId);
    const collection = found.payment_collections[0];
    const sessionData = collection?.payment_sessions[0]?.data as { state?: string } | undefined;
    const collectionDone =
      until.collectionStatus === undefined || collection?.status === until.collectionStatus;
    return collectionDone && sessionData?.state === until.sessionState ? found : undefined;
  });
}

const cents = (value: number | string) => Math.round(Number(value) * 100);

/**
 * Medusa's payments of an order against the service's orders, to the cent: what Medusa recorded as
 * captured and refunded is what the service captured and refunded; a canceled Medusa order leaves
 * nothing reserved at the service. Returns the service's orders compared.
 */
export async function expectMedusaMatchesService(shop: Shop, orderId: string) {
  const order = await orderWithPayments(shop, orderId);
  const compared = [];
  for (const collection of order.payment_collections) {
    for (const payment of collection.payments) {
      const serviceOrder = shop.sandbox.orders().find((o) => o.orderId === payment.data.order_id);
      expect(serviceOrder, `service order of payment ${payment.id}`).toBeDefined();
      const captured = (payment.captures ?? []).reduce((sum, c) => sum + cents(c.amount), 0);
      const refunded = (payment.refunds ?? []).reduce((sum, r) => sum + cents(r.amount), 0);
      expect(cents(serviceOrder!.capturedAmount), "captured").toBe(captured);
      expect(cents(serviceOrder!.refundedAmount), "refunded").toBe(refunded);
      expect(cents(serviceOrder!.totalAmount), "authorized").toBe(cents(payment.amount));
      if (payment.canceled_at || order.status === "canceled") {
        const reserved =
          cents(serviceOrder!.totalAmount) -
          cents(serviceOrder!.capturedAmount) -
          cents(serviceOrder!.cancelledAmount);
        expect(reserved, "still reserved at the service for a canceled payment").toBe(0);
      }
      compared.push(serviceOrder!);
    }
  }
  return { order, compared };
}

/** What the store answers when a payment session is initiated: the collection, or why not. */
export interface InitiateAnswer {
  payment_collection?: { payment_sessions: Array<{ id: string; data: Record<string, unknown> }> };
  message?: string;
}

/** The store's answer to completing a cart: an order, or the cart with an error. */
export interface CompleteAnswer {
  type: string;
  order?: { id: string };
  error?: { message: string };
}

/** POST /store/payment-collections/:id/payment-sessions, whatever it answers. */
export async function initiatePayment(
  shop: Shop,
  collectionId: string,
  headers: Record<string, string>,
  providerId: string = PURCHASE_AUTH_PROVIDER_ID,
) {
  return await shop.api.post<InitiateAnswer>(
    `/store/payment-collections/${collectionId}/payment-sessions`,
    { provider_id: providerId, data: {} },
    { headers, validateStatus: () => true },
  );
}

/** POST /store/carts/:id/complete, whatever it answers. */
export async function completeCart(shop: Shop, cartId: string, headers: Record<string, string>) {
  return await shop.api.post<CompleteAnswer>(
    `/store/carts/${cartId}/complete`,
    {},
    {
      headers,
      validateStatus: () => true,
    },
  );
}

/**
 * A customer with a fresh token places an order: a cart of 79.60 EUR paid with the token through
 * `providerId`, completed. Fails the test when the cart does not become an order.
 */
export async function placeOrder(
  shop: Shop,
  email: string,
  token: { needsChallenge?: boolean; funds?: string } = {},
  providerId: string = PURCHASE_AUTH_PROVIDER_ID,
) {
  const customer = await customerWithToken(shop, email, token);
  const { cartId, collectionId } = await cartWithCollection(shop, customer.headers);
  expect((await initiatePayment(shop, collectionId, customer.headers, providerId)).status).toBe(200);
  const completed = await completeCart(shop, cartId, customer.headers);
  expect(completed.data.type).toBe("order");
  return { customer, cartId, orderId: completed.data.order!.id };
}

/**
 * Completes the cart while the service's answers to creates are lost after it committed them: the
 * service authorizes, Medusa learns nothing (an unknown outcome), the cart does not complete.
 */
export async function completeWithAnswerLost(shop: Shop, cartId: string, headers: Record<string, string>) {
  loseCreateAnswers(shop.sandbox);
  try {
    return await completeCart(shop, cartId, headers);
  } finally {
    shop.sandbox.clearFaults();
  }
}

/**
 * A customer with a token whose checkout (Manual capture) the service authorized with its answer
 * lost: the cart did not complete, and `held` is the authorization Medusa does not know of.
 */
export async function checkoutWithAnswerLost(
  shop: Shop,
  email: string,
  authorizationsOf: (customerToken: string) => AuthorizationView[],
) {
  const customer = await customerWithToken(shop, email);
  const { cartId, collectionId } = await cartWithCollection(shop, customer.headers);
  expect((await initiatePayment(shop, collectionId, customer.headers)).status).toBe(200);
  const failed = await completeWithAnswerLost(shop, cartId, customer.headers);
  expect(failed.data.type).not.toBe("order");
  const [held] = authorizationsOf(customer.customerToken);
  expect(held?.status).toBe("Succeeded");
  return { customer, cartId, collectionId, held: held! };
}

/**
 * After that checkout's hold was released: the storefront initiates payment again (Medusa deletes
 * the settled session, nothing is sent for it) and completes the cart with a second authorization.
 */
export async function payAnewAfterRelease(
  shop: Shop,
  checkout: Awaited<ReturnType<typeof checkoutWithAnswerLost>>,
  authorizationsOf: (customerToken: string) => AuthorizationView[],
) {
  const { customer, cartId, collectionId } = checkout;
  expect((await initiatePayment(shop, collectionId, customer.headers)).status).toBe(200);
  const completed = await completeCart(shop, cartId, customer.headers);
  expect(completed.data.type).toBe("order");
  expect(authorizationsOf(customer.customerToken)).toHaveLength(2);
  const { compared } = await expectMedusaMatchesService(shop, completed.data.order!.id);
  expect(compared.map((o) => o.status)).toEqual(["NotActivated"]);
}

/** Until the faults are cleared, the service commits every create and its answer is lost. */
export function loseCreateAnswers(sandbox: SandboxServer): void {
  sandbox.injectFault({
    kind: "drop_after_commit",
    match: { method: "POST", path: "/purchase/authorizations" },
    count: null,
  });
}
