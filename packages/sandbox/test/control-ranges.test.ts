import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { accessTokenFor, authorize, call, errorReasons, openShop, requestToken } from "./helpers.js";

// Every control input is range-checked: a bad one is a 400 naming the field, and no control call,
// however odd, leaves the sandbox unable to answer the next request (issue 11).

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

const END_OF_TIME = "9999-12-31T23:59:59.999Z";

function control(method: string, path: string, body?: unknown) {
  return call(sandbox, method, path, body === undefined ? {} : { body });
}

/** A token request and the clock still answer: the sandbox is usable after whatever came before. */
async function expectStillUsable(): Promise<void> {
  const merchant = sandbox.createMerchant();
  const token = await requestToken(sandbox, {
    grant_type: "client_credentials",
    client_id: merchant.clientId,
    client_secret: merchant.clientSecret,
    scope: merchant.scope,
  });
  expect(token.status).toBe(200);
  const clock = await control("GET", "/sandbox/clock");
  expect(clock.status).toBe(200);
  expect(Date.parse(clock.json.nowIso)).toBe(clock.json.now);
}

function expectFieldError(response: Awaited<ReturnType<typeof control>>, field: string): void {
  expect(response.status).toBe(400);
  expect(errorReasons(response)).toEqual(["INVALID_REQUEST"]);
  expect(response.json.error.errors[0]).toMatchObject({ field });
  expect(response.json.error.errors[0].message).toContain(field);
}

describe("the virtual clock", () => {
  it.each([8.64e15, 1e300, 2 ** 53, -1, "100", null, Number.NaN])(
    "advance by %s is a 400 naming ms, and token requests and the clock still work",
    async (ms) => {
      const before = (await control("GET", "/sandbox/clock")).json.now as number;
      expectFieldError(await control("POST", "/sandbox/clock/advance", { ms }), "ms");
      const after = (await control("GET", "/sandbox/clock")).json.now as number;
      expect(after - before).toBeLessThan(60_000); // not moved
      await expectStillUsable();
    },
  );

  it("moves up to the end of year 9999 and stops there; everything keeps answering", async () => {
    const shop = await openShop(sandbox);
    const now = (await control("GET", "/sandbox/clock")).json.now as number;
    const tooFar = await control("POST", "/sandbox/clock/advance", {
      ms: Date.parse(END_OF_TIME) - now + 60_000,
    });
    expectFieldError(tooFar, "ms");
    expect(tooFar.json.error.errors[0].message).toContain(END_OF_TIME);

    // A second short of the end: real time passes between reading the clock and moving it, and a
    // target 1 ms short was beyond the end by then on a busy machine. The last second runs in real time.
    const toTheEnd = await control("POST", "/sandbox/clock/advance", {
      ms: Date.parse(END_OF_TIME) - now - 1000,
    });
    expect(toTheEnd.status).toBe(200);
    expectFieldError(await control("POST", "/sandbox/clock/advance", { ms: 10_000 }), "ms");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await control("GET", "/sandbox/clock")).json.nowIso).toBe(END_OF_TIME);
    expectFieldError(await control("POST", "/sandbox/clock/advance", { ms: 1 }), "ms");
    expect((await control("POST", "/sandbox/clock/advance", { ms: 0 })).status).toBe(200);

    const accessToken = await accessTokenFor(sandbox, shop.merchant);
    expect((await authorize(sandbox, { ...shop, accessToken })).status).toBe(202);
    await sandbox.settle();
    expect(sandbox.authorizations()[0]).toMatchObject({ status: "Succeeded", createdAt: END_OF_TIME });
    await expectStillUsable();
  });

  it("an attempt due past the end of time waits there instead of breaking the views and webhooks", async () => {
    const shop = await openShop(sandbox, { failNextAttempts: ["PAYMENT_FAILED"] });
    const response = await authorize(sandbox, shop, {
      attemptSchedule: { relative: ["00:00:01", "10675199.00:00:00"] },
    });
    expect(response.status).toBe(202);
    sandbox.advanceClock(1_000);
    await sandbox.settle();
    const [authorization] = (await control("GET", "/sandbox/authorizations")).json;
    expect(authorization).toMatchObject({ status: "Scheduled", nextAttemptAt: END_OF_TIME });
    const retrying = (await control("GET", "/sandbox/events")).json.find(
      (entry: { event: { type: string } }) => entry.event.type === "authorization.retrying",
    );
    expect(retrying.event.data.nextAttemptAt).toBe(END_OF_TIME);
    await expectStillUsable();
  });
});

describe("control input ranges", () => {
  let merchantId: string;
  beforeEach(() => {
    merchantId = sandbox.createMerchant().merchantId;
  });

  it.each([
    ["funds", { funds: "-1.00" }],
    ["funds", { funds: "1.001" }],
    ["funds", { funds: "10000000000000.00" }],
    ["funds", { funds: `1${"0".repeat(100_000)}` }],
    ["funds", { funds: 1e300 }],
    ["failNextAttempts", { failNextAttempts: Array(1001).fill("PAYMENT_FAILED") }],
    ["failNextAttempts[1]", { failNextAttempts: ["PAYMENT_FAILED", "x".repeat(101)] }],
    ["failureReason", { failureReason: "x".repeat(101) }],
    ["storeId", { storeId: "s".repeat(256) }],
    ["captureMode", { captureMode: "Later" }],
  ])("customer token: %s out of range is a 400 naming it", async (field, input) => {
    const response = await control("POST", "/sandbox/customer-tokens", { merchantId, ...input });
    expectFieldError(response, field);
    expect(sandbox.authorizations()).toEqual([]);
    await expectStillUsable();
  });

  it.each([
    ["failureReason", { failureReason: "INVALID_CURRENCY" }],
    ["failureReason", { failureReason: "IDEMPOTENCY_REQUEST_IN_PROGRESS" }],
    ["failNextAttempts[1]", { failNextAttempts: ["PAYMENT_FAILED", "AMOUNT_EXCEEDS_REMAINING"] }],
  ])("customer token: %s a webhook cannot carry (%j) is a 400 naming it", async (field, input) => {
    const response = await control("POST", "/sandbox/customer-tokens", { merchantId, ...input });
    expectFieldError(response, field);
    expect(JSON.stringify(response.json)).toMatch(/Can be in webhook/);
    const token = sandbox.createCustomerToken({ merchantId }).customerToken;
    expectFieldError(await control("PATCH", `/sandbox/customer-tokens/${token}`, input), field);
    await expectStillUsable();
  });

  it("customer token: a reason the service does not define yet is accepted, standing for a newer one", async () => {
    const response = await control("POST", "/sandbox/customer-tokens", {
      merchantId,
      failureReason: "SOME_FUTURE_REASON",
      failNextAttempts: ["TOKEN_REVOKED", "ANOTHER_NEW_REASON"],
    });
    expect(response.status).toBe(200);
  });

  it("the largest funds are accepted and shown exactly", async () => {
    const response = await control("POST", "/sandbox/customer-tokens", {
      merchantId,
      funds: "9999999999999.99",
    });
    expect([response.status, response.json.funds]).toEqual([200, "9999999999999.99"]);
  });

  it.each([
    ["urls", { urls: Array(21).fill("http://127.0.0.1/hook") }],
    ["urls[1]", { urls: ["http://127.0.0.1/hook", "ftp://127.0.0.1/"] }],
    ["urls[0]", { urls: [`http://127.0.0.1/${"x".repeat(2048)}`] }],
    ["secrets", { urls: [], secrets: Array(11).fill("whsec") }],
    ["secrets[0]", { urls: [], secrets: ["s".repeat(513)] }],
  ])("webhooks: %s out of range is a 400 naming it", async (field, input) => {
    expectFieldError(await control("POST", "/sandbox/webhooks", { merchantId, ...input }), field);
    await expectStillUsable();
  });

  it("names of merchants and clients are bounded", async () => {
    expectFieldError(await control("POST", "/sandbox/merchants", { name: "n".repeat(256) }), "name");
    expectFieldError(
      await control("POST", "/sandbox/merchants", { clientSecret: "s".repeat(513) }),
      "clientSecret",
    );
    expectFieldError(await control("POST", "/sandbox/api-clients", { merchantId, scope: "" }), "scope");
    await expectStillUsable();
  });

  it("at most 1,000 faults are active at once", async () => {
    for (let i = 0; i < 1000; i++) sandbox.injectFault({ kind: "unavailable", match: { path: "/nowhere" } });
    const response = await control("POST", "/sandbox/faults", { kind: "unavailable" });
    expect(response.status).toBe(409);
    await control("DELETE", "/sandbox/faults");
    expect(
      (await control("POST", "/sandbox/faults", { kind: "unavailable", match: { path: "/x" } })).status,
    ).toBe(200);
    await expectStillUsable();
  });

  it("the methods throw SandboxControlError with status 400 and the field", () => {
    expect(() => sandbox.advanceClock(8.64e15)).toThrow(
      expect.objectContaining({ status: 400, field: "ms" }),
    );
    expect(() => sandbox.injectFault({ kind: "rate_limited", retryAfterSeconds: -3 })).toThrow(
      expect.objectContaining({ status: 400, field: "retryAfterSeconds" }),
    );
  });
});
