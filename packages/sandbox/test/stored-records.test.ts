import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_VIRTUAL_TIME } from "../src/control/limits.js";
import { toEpochMs, toStoredTime } from "../src/core/stored-time.js";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { appended, entriesOf } from "../src/state/compact-list.js";
import { accessTokenFor, authorize, call, openShop } from "./helpers.js";

// The records keep times as offsets, items as JSON text and short lists without arrays; what the
// service and the control surface show must be exactly what was sent and done.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const SYNCHRONOUS = { attemptSchedule: { preferSynchronous: true } };

describe("stored times", () => {
  it("give back every virtual time exactly, fractions and the last millisecond included", () => {
    const now = Date.now();
    const times = [
      now,
      now + 1023 / 1024,
      now + 2 ** 31,
      now + 2 ** 31 + 0.5,
      2 ** 40 + 0.25,
      MAX_VIRTUAL_TIME,
    ];
    for (let step = 1; step < 2000; step++) times.push(now + step * 7_919_993.123_046_875);
    for (const time of times) expect(toEpochMs(toStoredTime(time))).toBe(time);
  });

  it("give back exactly a time with a fraction far before the module was loaded (a clock set back)", () => {
    // A distance from the load time rounds for these: they must be kept some other way.
    const times = [0.9999, 1e-3, 5e11 + 0.1644132541237484, -1.5, -8.64e15 + 0.5, 8.64e15 - 0.25];
    for (const time of times) expect(toEpochMs(toStoredTime(time))).toBe(time);
    for (const time of [0, 5e11, -8.64e15, 8.64e15]) {
      expect(typeof toStoredTime(time)).toBe("number");
      expect(toEpochMs(toStoredTime(time))).toBe(time);
    }
  });

  it("show the creation time of the authorization and its order as the attempt recorded it", async () => {
    const shop = await openShop(sandbox);
    for (const advance of [1023 / 1024, 40 * 24 * 3600_000 + 0.5, 3000 * 365 * 24 * 3600_000]) {
      sandbox.advanceClock(advance);
      shop.accessToken = await accessTokenFor(sandbox, shop.merchant); // the last one has expired
      const created = await authorize(sandbox, shop, SYNCHRONOUS);
      const { authorizationId, orderId } = created.json.data;
      const [auth] = sandbox.authorizations().filter((view) => view.authorizationId === authorizationId);
      const [order] = sandbox.orders({ authorizationId });
      expect(auth?.createdAt).toBe(auth?.attempts[0]?.at);
      expect(order?.createdAt).toBe(auth?.createdAt);
      const read = await call(sandbox, "GET", `/manage/orders/${orderId}`, { token: shop.accessToken });
      expect(read.json.data.createdAt).toBe(auth?.createdAt);
    }
  });
});

describe("stored items", () => {
  it("read back as sent, unicode and the largest quantity included", async () => {
    const shop = await openShop(sandbox);
    const items = [
      {
        id: "ü-1",
        description: 'Kaffee \u00e9\u0301 \ud83d\ude00 "quoted" \\ back\nslash',
        unitPrice: "0.01",
        quantity: "99999999",
        vat: "25.5",
      },
      { id: "sku-2", description: "中文描述", unitPrice: "-1.50", quantity: "1", vat: "0" },
    ];
    const created = await authorize(sandbox, shop, { order: { items }, ...SYNCHRONOUS });
    expect(created.status).toBe(200);
    const { orderId } = created.json.data;
    const read = await call(sandbox, "GET", `/manage/orders/${orderId}`, { token: shop.accessToken });
    expect(read.json.data.items).toStrictEqual(items);
    expect(read.json.data.totalAmount).toBe("999998.49");
    const [view] = sandbox.orders({ authorizationId: created.json.data.authorizationId });
    expect(view?.items).toStrictEqual(items);
  });

  it("are a fresh copy on every read", async () => {
    const shop = await openShop(sandbox);
    const created = await authorize(sandbox, shop, SYNCHRONOUS);
    const first = sandbox.orders()[0]!;
    first.items[0]!.description = "changed";
    expect(sandbox.orders()[0]?.items[0]?.description).toBe("Coffee beans");
    expect(created.status).toBe(200);
  });
});

describe("short lists", () => {
  it("keep one entry, then several, and at most the latest 100 operations of an order", async () => {
    const shop = await openShop(sandbox, { captureMode: "Manual" });
    const created = await authorize(sandbox, shop, SYNCHRONOUS);
    const { orderId, authorizationId } = created.json.data;
    expect(sandbox.orders()[0]?.operations).toEqual([]);
    for (let cents = 1; cents <= 102; cents++) {
      const amount = (cents / 100).toFixed(2);
      const write = await call(sandbox, "POST", `/manage/orders/${orderId}/capture`, {
        token: shop.accessToken,
        body: { amount },
      });
      expect(write.status).toBe(202);
      const { operations } = sandbox.orders()[0]!;
      expect(operations).toHaveLength(Math.min(cents, 100));
      expect(operations.at(-1)).toMatchObject({ type: "capture", amount });
    }
    expect(sandbox.orders()[0]?.operations[0]?.amount).toBe("0.03");
    expect(sandbox.authorizations()[0]?.attempts).toMatchObject([{ authorizationId, attempt: 1 }]);
  });

  it("hand out copies: changing one changes nothing kept", () => {
    const one = { n: 1 };
    let list = appended(undefined, one, 3);
    expect(list).toBe(one);
    entriesOf(list).push({ n: 9 });
    expect(entriesOf(list)).toEqual([one]);
    list = appended(list, { n: 2 }, 3);
    list = appended(list, { n: 3 }, 3);
    list = appended(list, { n: 4 }, 3);
    expect(entriesOf(list)).toEqual([{ n: 2 }, { n: 3 }, { n: 4 }]);
    entriesOf(list).pop();
    entriesOf(list).push({ n: 9 });
    expect(entriesOf(list)).toEqual([{ n: 2 }, { n: 3 }, { n: 4 }]);
    expect(entriesOf(undefined)).toEqual([]);
  });
});
