import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkAuthorizationRequest,
  parseTimespan,
  signWebhook,
  toMinorUnits,
  ValidationError,
  validateAuthorizationRequest,
  verifyWebhook,
} from "../src/index.js";
import { validRequest } from "./fixtures.js";
import { openShop, type SandboxServer, startSandbox, tokenRequestsOf } from "./sandbox-fixture.js";

// Regressions of the input and format defects reproduced against an independent server: each
// case here failed (or threw the wrong error) before.

function issuesOf(input: unknown) {
  const result = checkAuthorizationRequest(input);
  return result.success ? [] : result.issues.map((issue) => `${issue.path} ${issue.rule}`);
}

const withItem = (item: Record<string, unknown>) =>
  validRequest({
    order: { ...validRequest().order, items: [{ ...validRequest().order.items[0]!, ...item }] },
  });

describe("timespans in the forms the service's own parser accepts", () => {
  it.each([
    ["1.00:00:10", 86_410_000],
    ["100.00:00:00", 8_640_000_000],
    ["00:00:10", 10_000],
    ["01.00:30:00", 88_200_000],
  ])("%s is %d ms and accepted in a relative schedule", (timespan, ms) => {
    expect(parseTimespan(timespan)).toBe(ms);
    expect(issuesOf(validRequest({ attemptSchedule: { relative: [timespan] } }))).toEqual([]);
  });

  it.each(["24:00:00", "1.24:00:00", "00:60:00", "1.2:00:00", "abc", ""])(
    "%s is refused, naming the field",
    (timespan) => {
      expect(issuesOf(validRequest({ attemptSchedule: { relative: [timespan] } }))).toEqual([
        "attemptSchedule.relative[0] timespan",
      ]);
    },
  );

  it("an empty relative or absolute schedule is an empty schedule, which the specification allows", () => {
    expect(issuesOf(validRequest({ attemptSchedule: { relative: [] } }))).toEqual([]);
    // Refused with min_items before any network call, though the service takes it (spec 2.4).
    expect(issuesOf(validRequest({ attemptSchedule: { absolute: [] } }))).toEqual([]);
  });
});

describe("bad input gets a ValidationError naming the field, never another exception", () => {
  it("an invalid Date in absolute", () => {
    const attempt = () =>
      validateAuthorizationRequest(validRequest({ attemptSchedule: { absolute: [new Date(Number.NaN)] } }));
    expect(attempt).toThrow(ValidationError);
    expect(issuesOf(validRequest({ attemptSchedule: { absolute: [new Date(Number.NaN)] } }))).toEqual([
      "attemptSchedule.absolute[0] timestamp",
    ]);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, 1e21])("a unitPrice of %s", (unitPrice) => {
    expect(issuesOf(withItem({ unitPrice }))).toEqual([
      expect.stringMatching(/^order\.items\[0\]\.unitPrice /),
    ]);
  });

  it("a bigint amount is refused, so a value from toMinorUnits passed back cannot be sent 100x too large", () => {
    const minor = toMinorUnits("24.90", "EUR"); // 2490n
    expect(issuesOf(withItem({ unitPrice: minor }))).toEqual([
      expect.stringMatching(/^order\.items\[0\]\.unitPrice /),
    ]);
  });

  it("currency codes are upper-cased without locale surprises: ıNR is not INR", () => {
    expect(issuesOf(validRequest({ order: { ...validRequest().order, currency: "ıNR" } }))).toEqual([
      "order.currency currency",
    ]);
    expect(issuesOf(validRequest({ order: { ...validRequest().order, currency: "inr" } }))).toEqual([]);
  });

  it("string lengths are counted in code points, whatever zod's minor version counts", () => {
    const emoji = "\u{1F600}";
    expect(issuesOf(withItem({ id: emoji.repeat(26) }))).toEqual([]);
    expect(issuesOf(withItem({ id: emoji.repeat(51) }))).toEqual(["order.items[0].id max_length"]);
    expect(
      issuesOf(validRequest({ order: { ...validRequest().order, reference: emoji.repeat(50) } })),
    ).toEqual([]);
  });

  it("a ValidationError's message stays bounded, however many items are bad", () => {
    const items = Array.from({ length: 20_000 }, () => ({
      id: "",
      description: "",
      unitPrice: "x",
      quantity: "0",
      vat: "200",
    }));
    let error: unknown;
    try {
      validateAuthorizationRequest(validRequest({ order: { ...validRequest().order, items } }));
    } catch (caught) {
      error = caught;
    }
    expect(ValidationError.isInstance(error)).toBe(true);
    const validation = error as ValidationError;
    expect(validation.message.length).toBeLessThan(2_000);
    expect(validation.message).toMatch(/and \d+ more$/);
    expect(validation.issues.length).toBeLessThanOrEqual(100);
  });
});

describe("webhook verification options", () => {
  it.each([Number.NaN, -1, Number.POSITIVE_INFINITY])(
    "a toleranceSeconds of %s is a TypeError, not an open door",
    (toleranceSeconds) => {
      const signed = signWebhook({ type: "customer-token.status-changed", data: {} } as never, "secret", {
        timestamp: 1,
      });
      expect(() => verifyWebhook(signed.body, signed.headers, "secret", { toleranceSeconds })).toThrow(
        TypeError,
      );
    },
  );

  it.each([Number.NaN, -5, Number.NEGATIVE_INFINITY])("a nowSeconds of %s is a TypeError", (nowSeconds) => {
    const signed = signWebhook({ type: "customer-token.status-changed", data: {} } as never, "secret");
    expect(() => verifyWebhook(signed.body, signed.headers, "secret", { nowSeconds })).toThrow(TypeError);
  });
});

describe("access tokens that live no longer than the refresh margin", () => {
  let sandbox: SandboxServer;
  beforeAll(async () => {
    sandbox = await startSandbox({ tokenLifetimeSeconds: 60 });
  });
  afterAll(() => sandbox.close());

  it("are refreshed at half their lifetime, not fetched on every call", async () => {
    const shop = openShop(sandbox, { now: () => sandbox.now() }); // margin 120 s > lifetime 60 s
    for (let call = 0; call < 20; call++) await shop.client.customerTokens.get(shop.customerToken);
    expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(1);
    sandbox.advanceClock(31_000);
    await shop.client.customerTokens.get(shop.customerToken); // past half: one refresh
    await sandbox.settle();
    await shop.client.customerTokens.get(shop.customerToken);
    expect(tokenRequestsOf(sandbox, shop.clientId)).toBe(2);
    await shop.client.close();
  });
});
