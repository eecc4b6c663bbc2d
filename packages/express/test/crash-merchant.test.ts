import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CrashShop, sandboxWithMerchant, startCrashShop } from "./crash/crash-shop.js";
import type { SandboxProcess, ShopProcess } from "./crash/processes.js";

// The merchant side of the crash proof: manual-capture charges, then a back office capturing part,
// capturing the rest and refunding twice, each press with an id of its own and sent again after a
// 5xx or a network error as the README says, while ~40 % of the order writes lose or garble their
// answer and the shop is SIGKILLed again and again. Then every order at the service must show each
// press exactly once, and every charge the order's status.

const CHARGES = 30;
const WEBHOOK_SECRET = "whsec_merchant_crash_0123456789abcdef";
const MERCHANT_KEY = "merchant-crash-staff";
/** One cart line, 2 × 24.90 = 49.80: capture 10.00, the rest (39.80), refund 5.00 and 3.00. */
const ITEM = { id: "beans-1kg", description: "Coffee beans 1 kg", unitPrice: "24.90", vat: 14, quantity: 2 };
const PRESSES = [
  { path: "capture", body: { amount: "10.00" } },
  { path: "capture", body: {} },
  { path: "refund", body: { amount: "5.00" } },
  { path: "refund", body: { amount: "3.00" } },
] as const;
/** The shop is killed once every this many presses answered (at a random moment after). */
const KILL_EVERY_PRESSES = 12;
const MAX_KILLS = 10;

interface Paid {
  reference: string;
  authorizationId: string;
}

let sandbox: SandboxProcess;
let crashShop: CrashShop | undefined;
let shop: ShopProcess;
let admin: pg.Pool;
let schema: string;
const paid: Paid[] = [];

beforeAll(async () => {
  const started = await sandboxWithMerchant();
  sandbox = started.sandbox;
  const customers = [];
  const carts: Record<string, unknown> = {};
  const orders: Array<{ session: string; cartId: string; reference: string }> = [];
  for (let index = 0; index < CHARGES; index++) {
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
  crashShop = await startCrashShop({
    ...started,
    shop: { customers, carts },
    webhookSecret: WEBHOOK_SECRET,
    env: { CAPTURE_MODE: "Manual", MERCHANT_KEY },
  });
  ({ shop, admin, schema } = crashShop);
  // Paid before the faults: this test is about what happens to the money afterwards.
  for (const order of orders) {
    const answer = await post("/payments/charges", { "x-session": order.session }, { cartId: order.cartId });
    expect(answer?.body.status).toBe("authorized");
    paid.push({ reference: order.reference, authorizationId: answer!.body.authorizationId });
  }
}, 60_000);

afterAll(async () => {
  await crashShop?.close();
  sandbox?.kill();
});

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: read loosely; the assertions are the check
  body: any;
}

/** One POST to the shop; undefined for a network error (the shop is down). */
async function post(
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

/** A back-office press as the README has it: its own id, sent again after a 5xx or no answer. */
async function press(charge: Paid, path: string, body: object, signal: AbortSignal): Promise<Answer> {
  const sequence = `press-${randomUUID()}`;
  for (;;) {
    if (signal.aborted) throw new Error(`${path} of ${charge.reference} never got an answer`);
    const answer = await post(
      `/payments/charges/${charge.authorizationId}/${path}`,
      { "x-merchant-key": MERCHANT_KEY },
      { ...body, sequence },
    );
    if (answer !== undefined && answer.status < 500) return answer;
    await sleep(50 + Math.random() * 100);
  }
}

describe("merchant writes converge to the service's truth across SIGKILLs", () => {
  it("each press moves its money exactly once, and every charge shows its order's status", async () => {
    const writes = { method: "POST", path: "/manage/orders/" };
    for (const fault of [
      { kind: "drop_after_commit", probability: 0.12 },
      { kind: "gateway_error", status: 502, phase: "after_commit", probability: 0.08 },
      { kind: "gateway_error", status: 504, phase: "before_commit", probability: 0.05 },
      { kind: "unavailable", probability: 0.06 },
      { kind: "garbled_success", body: "empty", probability: 0.05 },
      { kind: "in_progress", probability: 0.04 },
    ]) {
      await sandbox.control("POST", "/sandbox/faults", { ...fault, match: writes });
    }

    const stop = AbortSignal.timeout(120_000);
    let answered = 0;
    let done = false;
    const killing = (async () => {
      while (!done && shop.kills < MAX_KILLS) {
        const due = (shop.kills + 1) * KILL_EVERY_PRESSES;
        while (!done && answered < due) await sleep(10);
        if (done) break;
        await sleep(Math.random() * 200);
        await shop.kill();
        await shop.start();
      }
    })();
    const answers: Answer[][] = [];
    try {
      // Five back-office clerks, each taking the next charge through its four presses.
      const queue = [...paid.entries()];
      await Promise.all(
        Array.from({ length: 5 }, async () => {
          for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
            const [index, charge] = next;
            answers[index] = [];
            for (const { path, body } of PRESSES) {
              answers[index].push(await press(charge, path, body, stop));
              answered++;
            }
          }
        }),
      );
    } finally {
      done = true;
      await killing;
    }
    await sandbox.control("DELETE", "/sandbox/faults");
    await sandbox.control("POST", "/sandbox/settle");

    const orders = await sandbox.control<
      Array<{ authorizationId: string; status: string; operations: Array<{ type: string; amount: string }> }>
    >("GET", "/sandbox/orders");
    const byAuthorization = new Map(orders.map((order) => [order.authorizationId, order]));
    const wrong: unknown[] = [];
    for (const [index, charge] of paid.entries()) {
      const order = byAuthorization.get(charge.authorizationId);
      const moves = order?.operations.map((operation) => `${operation.type} ${operation.amount}`);
      if (
        JSON.stringify(moves) !==
        JSON.stringify(["capture 10.00", "capture 39.80", "refund 5.00", "refund 3.00"])
      )
        wrong.push({ reference: charge.reference, moves });
      const statuses = answers[index]?.map((answer) => answer.status);
      if (JSON.stringify(statuses) !== "[200,200,200,200]")
        wrong.push({ reference: charge.reference, statuses });
    }
    // The shop's records, once its webhooks and reads have settled: the order's status.
    let rows: Array<{ reference: string; status: string }> = [];
    for (let wait = 0; wait < 40; wait++) {
      rows = (await admin.query(`SELECT reference, status FROM ${schema}.purchase_auth_charges`)).rows;
      if (rows.every((row) => row.status === "partially_refunded")) break;
      await sleep(250);
    }
    const drifted = rows.filter((row) => row.status !== "partially_refunded");
    console.log(
      `express merchant crash: charges=${CHARGES}, presses=${answered}, shop killed ${shop.kills} times, ` +
        `wrong moves or answers=${wrong.length}, records drifted from the order=${drifted.length}`,
    );
    expect(shop.kills).toBeGreaterThanOrEqual(5);
    expect(wrong).toEqual([]);
    expect(drifted).toEqual([]);
  }, 150_000);
});
