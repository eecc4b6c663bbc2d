import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";
import type {
  CreateCustomerTokenInput,
  MerchantCredentials,
  SandboxServer,
  Simulator,
} from "../src/index.js";

// Raw HTTP helpers: the tests talk to the sandbox like any client would, never through our client.

/** Response bodies are read loosely in assertions; the assertions themselves are the type check. */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type Json = any;

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body; undefined when it is empty or not JSON. */
  json: Json;
}

export interface CallOptions {
  token?: string;
  /** Serialized as JSON with Content-Type application/json unless `rawBody` is given. */
  body?: unknown;
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export async function call(
  sandbox: SandboxServer,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (body === undefined && options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  Object.assign(headers, options.headers);
  const response = await request(`${sandbox.url}${path}`, {
    method: method as "POST",
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

/** POSTs the client-credentials form; returns the raw answer. */
export function requestToken(
  sandbox: SandboxServer,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return call(sandbox, "POST", "/oauth2/v2.0/token", {
    rawBody: new URLSearchParams(form).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });
}

export async function accessTokenFor(sandbox: SandboxServer, merchant: MerchantCredentials): Promise<string> {
  const response = await requestToken(sandbox, {
    grant_type: "client_credentials",
    client_id: merchant.clientId,
    client_secret: merchant.clientSecret,
    scope: merchant.scope,
  });
  if (response.status !== 200) throw new Error(`token request failed: ${response.status} ${response.text}`);
  return response.json.access_token as string;
}

/** An access token from a simulator without sockets (`Simulator.handle`), or "" when refused. */
export async function accessTokenIn(simulator: Simulator, merchant: MerchantCredentials): Promise<string> {
  const token = await simulator.handle({
    method: "POST",
    url: "/oauth2/v2.0/token",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: merchant.clientId,
      client_secret: merchant.clientSecret,
      scope: merchant.scope,
    }).toString(),
  });
  return token.kind === "respond" ? JSON.parse(token.body ?? "{}").access_token : "";
}

export interface Shop {
  merchant: MerchantCredentials;
  accessToken: string;
  customerToken: string;
}

/** A merchant, an access token and one customer token (Active, EUR, auto capture unless overridden). */
export async function openShop(
  sandbox: SandboxServer,
  token: Omit<CreateCustomerTokenInput, "merchantId"> = {},
): Promise<Shop> {
  const merchant = sandbox.createMerchant();
  const accessToken = await accessTokenFor(sandbox, merchant);
  const { customerToken } = sandbox.createCustomerToken({ merchantId: merchant.merchantId, ...token });
  return { merchant, accessToken, customerToken };
}

/** A valid create body: one item of 60.25 × 2 = 120.50 EUR. */
export function authorizationBody(customerToken: string, extra: Record<string, unknown> = {}) {
  const { order, ...rest } = extra as { order?: Record<string, unknown> };
  return {
    customerToken,
    order: {
      currency: "EUR",
      reference: "order-1",
      items: [{ id: "sku-1", description: "Coffee beans", unitPrice: "60.25", quantity: "2", vat: "25" }],
      ...order,
    },
    ...rest,
  };
}

export function authorize(
  sandbox: SandboxServer,
  shop: Shop,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return call(sandbox, "POST", "/purchase/authorizations", {
    token: shop.accessToken,
    body: authorizationBody(shop.customerToken, extra),
    headers,
  });
}

export const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Asserts the error envelope of specification 2.6 and returns its reasons. */
export function errorReasons(response: RawResponse): string[] {
  const { json } = response;
  if (typeof json?.id !== "string" || !GUID.test(json.id))
    throw new Error(`no envelope id in ${response.text}`);
  if (json.error?.code !== response.status) throw new Error(`error.code ≠ status in ${response.text}`);
  if (typeof json.error.message !== "string" || json.error.message === "")
    throw new Error("no error.message");
  if (!Array.isArray(json.error.errors)) throw new Error(`no error.errors in ${response.text}`);
  return json.error.errors.map((entry: { reason: string }) => entry.reason);
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: string;
  event: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Status to answer the next requests with, consumed one per request (then 200). */
  failNext(...statuses: number[]): void;
  close(): Promise<void>;
}

/** A real HTTP server that records every webhook POST. */
export async function startReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const statuses: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      received.push({ headers: req.headers, rawBody, event: JSON.parse(rawBody) });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    received,
    failNext: (...next) => statuses.push(...next),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The events of `type` the sandbox has recorded, oldest first. */
export function eventsOf(
  sandbox: SandboxServer,
  type: string,
): Array<{ id: string; type: string; data: Json }> {
  return sandbox
    .events()
    .map(({ event }) => event)
    .filter((event) => event.type === type);
}
