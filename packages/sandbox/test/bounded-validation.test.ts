import { authorizationRequestSchema, toValidationIssues } from "@purchase-auth/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { boundedForValidation } from "../src/routes/bounded-validation.js";
import { authorizationBody, authorize, call, errorReasons, openShop, type Shop } from "./helpers.js";

// Validation whose cost is bounded by the limits, not by the input (issue 11): a 1 MiB body of
// ~350,000 empty items used to cost 1.5 GB and 4 s. The answer must stay exactly what core's schema
// says (the first 100 issues); the speed and memory are measured by `pnpm bench` (row
// "sandbox-validation"), not asserted here.

let sandbox: SandboxServer;
let shop: Shop;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  sandbox.reset();
  shop = await openShop(sandbox);
});

const ONE_MIB = 1024 * 1024;

/** The INVALID_REQUEST entries core's schema gives for the whole body (the first 100). */
function expectedEntries(body: unknown) {
  const parsed = authorizationRequestSchema.safeParse(body);
  if (parsed.success) return [];
  return toValidationIssues(parsed.error, body)
    .slice(0, 100)
    .map((issue) => ({
      reason: "INVALID_REQUEST",
      message: issue.message,
      field: issue.path,
      rule: issue.rule,
    }));
}

function post(rawBody: string) {
  return call(sandbox, "POST", "/purchase/authorizations", {
    token: shop.accessToken,
    rawBody,
    headers: { "content-type": "application/json" },
  });
}

describe("a pathological body", () => {
  it("1 MiB of ~350,000 empty items is answered 400 with the first 100 entries, and the next request works", async () => {
    const prefix = `{"customerToken":"${shop.customerToken}","order":{"currency":"EUR","items":[`;
    const count = Math.floor((ONE_MIB - prefix.length - 3) / 3);
    const rawBody = `${prefix}${Array(count).fill("{}").join(",")}]}}`;
    expect(Buffer.byteLength(rawBody)).toBeLessThanOrEqual(ONE_MIB);
    expect(count).toBeGreaterThan(340_000);

    const response = await post(rawBody);
    expect(response.status).toBe(400);
    const entries = response.json.error.errors;
    expect(entries).toHaveLength(100);
    expect(entries[0]).toEqual({
      reason: "INVALID_REQUEST",
      message: "order.items[0].id is required",
      field: "order.items[0].id",
      rule: "required",
    });
    expect(entries[99].field).toBe("order.items[19].vat");

    const normal = await authorize(sandbox, shop);
    expect(normal.status).toBe(202);
  });

  it("340,000 empty relative timespans: the first 100, and the sandbox still serves", async () => {
    const relative = Array(340_000).fill("");
    const body = authorizationBody(shop.customerToken, { attemptSchedule: { relative } });
    const response = await post(JSON.stringify(body));
    expect(response.status).toBe(400);
    expect(response.json.error.errors).toHaveLength(100);
    expect(response.json.error.errors[99]).toMatchObject({
      field: "attemptSchedule.relative[99]",
      rule: "timespan",
    });
    expect((await authorize(sandbox, shop)).status).toBe(202);
  });
});

describe("the shortened body gives exactly core's first 100 issues", () => {
  const validItem = { id: "sku", description: "Beans", unitPrice: "1.00", quantity: "1", vat: "25" };
  const cases: Array<[string, (customerToken: string) => unknown]> = [
    [
      "bad fields before the items, 300 bad items",
      () => ({
        customerToken: "nope",
        storeId: "",
        order: { currency: "eur", items: Array(300).fill({ vat: "101" }) },
      }),
    ],
    [
      "valid items then bad ones",
      (token) => ({
        customerToken: token,
        order: { currency: "EUR", items: [...Array(150).fill(validItem), ...Array(200).fill({ id: 1 })] },
      }),
    ],
    [
      "a few bad items then a long bad schedule",
      (token) => ({
        customerToken: token,
        order: { currency: "EUR", items: [...Array(120).fill(validItem), { id: "" }, {}] },
        attemptSchedule: { relative: Array(500).fill("1 day"), absolute: Array(500).fill("tomorrow") },
      }),
    ],
    [
      "bad absolute times only",
      (token) => ({
        customerToken: token,
        order: { currency: "EUR", items: [validItem] },
        attemptSchedule: { absolute: Array(400).fill("2026-13-01T00:00:00+00:00") },
      }),
    ],
    [
      "items of the wrong type after bad references",
      (token) => ({
        customerToken: token,
        order: { currency: "EUR", reference: "r".repeat(60), items: Array(200).fill(null) },
      }),
    ],
  ];

  it.each(cases)("%s", async (_, build) => {
    const body = build(shop.customerToken);
    const response = await post(JSON.stringify(body));
    expect(response.status).toBe(400);
    expect(errorReasons(response).length).toBeLessThanOrEqual(100);
    expect(response.json.error.errors).toEqual(expectedEntries(body));
    expect(boundedForValidation(body)).not.toBe(body); // the cheap path was taken
  });

  it("a long valid order is never shortened and is accepted", async () => {
    const items = Array(2_000).fill(validItem);
    const body = authorizationBody(shop.customerToken, { order: { items } });
    expect(boundedForValidation(body)).toBe(body);
    const response = await post(JSON.stringify(body));
    expect(response.status).toBe(202);
    expect(sandbox.authorizations()[0]?.amount).toBe("2000.00");
  });
});
