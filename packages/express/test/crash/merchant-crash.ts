import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { expect } from "vitest";
import { type CrashShop, sandboxWithMerchant, startCrashShop } from "./crash-shop.js";
import type { SandboxProcess, ShopProcess } from "./processes.js";

// What both merchant crash tests share: manual-capture charges paid before any fault, the back
// office's four presses, the faults on the order writes, the SIGKILLs between presses, and the
// sandbox's orders to compare with.

export const MERCHANT_KEY = "merchant-crash-staff";
const WEBHOOK_SECRET = "whsec_merchant_crash_0123456789abcdef";
/** One cart line, 2 × 24.90 = 49.80: capture 10.00, the rest (39.80), refund 5.00 and 3.00. */
const ITEM = { id: "beans-1kg", description: "Coffee beans 1 kg", unitPrice: "24.90", vat: 14, quantity: 2 };
export const PARTIAL_CAPTURE = "10.00";
/** The back office's presses on each charge, in this order. */
export const PRESSES = [
  { path: "capture", body: { amount: PARTIAL_CAPTURE } },
  { path: "capture", body: {} },
  { path: "refund", body: { amount: "5.00" } },
  { path: "refund", body: { amount: "3.00" } },
] as const;

/** ~40 % of the order writes lose, refuse or garble their answer, before or after the commit. */
const ORDER_WRITE_FAULTS = [
  { kind: "drop_after_commit", probability: 0.12 },
  { kind: "gateway_error", status: 502, phase: "after_commit", probability: 0.08 },
  { kind: "gateway_error", status: 504, phase: "before_commit", probability: 0.05 },
  { kind: "unavailable", probability: 0.06 },
  { kind: "garbled_success", body: "empty", probability: 0.05 },
  { kind: "in_progress", probability: 0.04 },
];

export interface Paid {
  reference: string;
  authorizationId: string;
}

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: read loosely; the assertions are the check
  body: any;
}

export interface PaidCharges {
  sandbox: SandboxProcess;
  crashShop: CrashShop;
  paid: Paid[];
  close(): Promise<void>;
}

/**
 * The sandbox and the shop (manual capture, merchant routes on, `env` for its other settings),
 * and `count` charges authorized through the shop before any fault: these tests are about what
 * happens to the money afterwards.
 */
export async function startPaidCharges(
  count: number,
  env: Record<string, string> = {},
): Promise<PaidCharges> {
  const started = await sandboxWithMerchant();
  const { sandbox } = started;
  const customers = [];
  const carts: Record<string, unknown> = {};
  const orders: Array<{ session: string; cartId: string; reference: string }> = [];
  for (let index = 0; index < count; index++) {
    const { customerToken } = await sandbox.control<{ customerToken: string }>(
      "POST",
      "/sandbox/customer-tokens",
      { merchantId: started.merchant.merchantId },
    );
    const customer = { session: randomUUID(), customerId: `customer-${index}`, customerToken };
    customers.push(customer);
    const cartId = `cart-${randomBytes(4).toString("hex")}`;
    const reference = `order-${randomBytes(6).toString("hex")}`;
    carts[cartId] = { customerId: customer.customerId, reference, items: [ITEM] };
    orders.push({ session: customer.session, cartId, reference });
  }
  let crashShop: CrashShop | undefined;
  const paid: Paid[] = [];
  try {
    crashShop = await startCrashShop({
      ...started,
      shop: { customers, carts },
      webhookSecret: WEBHOOK_SECRET,
      env: { CAPTURE_MODE: "Manual", MERCHANT_KEY, ...env },
    });
    for (const order of orders) {
      const answer = await post(
        crashShop.shop,
        "/payments/charges",
        { "x-session": order.session },
        { cartId: order.cartId },
      );
      expect(answer?.body.status).toBe("authorized");
      paid.push({ reference: order.reference, authorizationId: answer!.body.authorizationId });
    }
  } catch (error) {
    // The caller gets nothing to close: no shop, reconciler or schema may outlive a failed start.
    await crashShop?.close().catch(() => undefined);
    sandbox.kill();
    throw error;
  }
  const shop = crashShop;
  return {
    sandbox,
    crashShop: shop,
    paid,
    async close() {
      await shop.close();
      sandbox.kill();
    },
  };
}

/** One POST to the shop; undefined for a network error (the shop is down). */
export async function post(
  shop: ShopProcess,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<Answer | undefined> {
  try {
    const response = await request(`${shop.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: text === "" ? undefined : JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** One back-office press (one send of it) of `path` on the charge, under `sequence`. */
export function postMerchantWrite(
  shop: ShopProcess,
  charge: Paid,
  path: string,
  body: object,
  sequence: string,
): Promise<Answer | undefined> {
  return post(
    shop,
    `/payments/charges/${charge.authorizationId}/${path}`,
    { "x-merchant-key": MERCHANT_KEY },
    { ...body, sequence },
  );
}

/** The shared faults on the order writes, and `more` of a test's own. */
export async function injectOrderWriteFaults(
  sandbox: SandboxProcess,
  more: ReadonlyArray<Record<string, unknown>> = [],
): Promise<void> {
  const writes = { method: "POST", path: "/manage/orders/" };
  for (const fault of [...ORDER_WRITE_FAULTS, ...more]) {
    await sandbox.control("POST", "/sandbox/faults", { ...fault, match: writes });
  }
}

export async function clearFaultsAndSettle(sandbox: SandboxProcess): Promise<void> {
  await sandbox.control("DELETE", "/sandbox/faults");
  await sandbox.control("POST", "/sandbox/settle");
}

/**
 * SIGKILLs the shop (and starts it again) at a random moment after every `every` presses answered,
 * at most `max` times, until `stop()`, which waits for a restart under way.
 */
export function killEveryPresses(
  shop: ShopProcess,
  every: number,
  max: number,
  answered: () => number,
): { stop(): Promise<void> } {
  let stopped = false;
  const killing = (async () => {
    while (!stopped && shop.kills < max) {
      const due = (shop.kills + 1) * every;
      while (!stopped && answered() < due) await sleep(10);
      if (stopped) break;
      await sleep(Math.random() * 200);
      await shop.kill();
      await shop.start();
    }
  })();
  return {
    async stop() {
      stopped = true;
      await killing;
    },
  };
}

export interface OrderAtService {
  authorizationId: string;
  status: string;
  operations: Array<{ type: string; amount: string }>;
}

/** The sandbox's orders by authorization id, each with the moves it made (type and amount). */
export async function ordersByAuthorization(sandbox: SandboxProcess): Promise<Map<string, OrderAtService>> {
  const orders = await sandbox.control<OrderAtService[]>("GET", "/sandbox/orders");
  return new Map(orders.map((order) => [order.authorizationId, order]));
}

/** An order's moves as "type amount", in the order the service made them. */
export function movesOf(order: OrderAtService | undefined): string[] {
  return order?.operations.map((operation) => `${operation.type} ${operation.amount}`) ?? [];
}
