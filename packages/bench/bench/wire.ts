import { randomUUID } from "node:crypto";
import { type AuthorizationRequest, DEFAULT_HEADERS, DEFAULT_PATHS } from "@purchase-auth/core";
import { type Dispatcher, request } from "undici";

// What every variant sends, in wire form: the same body bytes and the same headers, so the only
// difference between the variants is the client code around the request.

/** Credentials of one sandbox merchant plus an Active customer token with unlimited funds. */
export interface ShopCredentials {
  baseUrl: string;
  merchantId: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  customerToken: string;
}

export const CREATE_PATH = DEFAULT_PATHS.authorizations;
export const TOKEN_PATH = DEFAULT_PATHS.token;
export const IDEMPOTENCY_HEADER = DEFAULT_HEADERS.idempotencyKey;

/**
 * A create-authorization body in wire form (amounts as strings, currency upper case), with keys in
 * the order core's schema emits them, so `JSON.stringify` gives the bytes our client sends.
 * Synchronous, so every variant gets a definite 200 and the sandbox does no background work.
 */
export function authorizationBody(customerToken: string, itemCount = 1): AuthorizationRequest {
  const items = Array.from({ length: itemCount }, (_, index) => ({
    id: `sku-${index + 1}`,
    description: `Coffee beans 1 kg, batch ${index + 1}`,
    unitPrice: "24.90",
    quantity: "2",
    vat: "14",
  }));
  return {
    customerToken,
    order: { items, currency: "EUR", reference: "bench-order", captureMode: "Auto" },
    attemptSchedule: { preferSynchronous: true },
  };
}

/** The headers of one create call; only the bearer token and the idempotency key vary. */
export function createHeaders(accessToken: string, idempotencyKey: string): Record<string, string> {
  return {
    accept: "application/json",
    "content-type": "application/json",
    authorization: `Bearer ${accessToken}`,
    [IDEMPOTENCY_HEADER]: idempotencyKey,
  };
}

/** One client-credentials token request, outside any measurement. */
export async function fetchAccessToken(shop: ShopCredentials, dispatcher?: Dispatcher): Promise<string> {
  const response = await request(new URL(TOKEN_PATH, shop.baseUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: shop.clientId,
      client_secret: shop.clientSecret,
      scope: shop.scope,
    }).toString(),
    ...(dispatcher === undefined ? {} : { dispatcher }),
  });
  const json = (await response.body.json()) as { access_token?: unknown };
  if (response.statusCode !== 200 || typeof json.access_token !== "string") {
    throw new Error(`token request failed with HTTP ${response.statusCode}`);
  }
  return json.access_token;
}

/**
 * The body the sandbox answers a token request or a synchronous create with (200), new ids each
 * time (from `newId`); undefined for any other path. For the stand-ins that answer without a sandbox.
 */
export function cannedAnswer(path: string, newId: () => string = randomUUID): string | undefined {
  if (path === TOKEN_PATH) {
    return JSON.stringify({ token_type: "Bearer", expires_in: 3600, access_token: newId() });
  }
  if (path === CREATE_PATH) {
    return JSON.stringify({ id: newId(), data: { authorizationId: newId(), orderId: newId() } });
  }
  return undefined;
}

/** Every variant treats anything but the synchronous 200 as a failed benchmark, not a data point. */
export function assertAuthorized(status: number, variant: string): void {
  if (status !== 200) throw new Error(`${variant}: create answered HTTP ${status}, expected 200`);
}
