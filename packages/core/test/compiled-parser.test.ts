import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  authorizationRequestSchema,
  createAuthorizationResponseSchema,
  customerTokenSchema,
  errorEnvelopeSchema,
  orderSchema,
  webhookEventSchema,
} from "../src/index.js";
import { FALL_BACK, fastParserOf } from "../src/validation/compiled-parser.js";

// The fast path must answer exactly what zod answers, or step aside: for every generated input,
// either it falls back, or zod accepts the input too and returns the same value (same keys in the
// same order, same key presence for undefined values, same strings). And for valid input of the
// schemas it compiles fully, it must not step aside (else it is only a slower zod).

type Json = unknown;

/** Equal as zod's output is equal: key order and presence included, frozen or not. */
function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]))
    );
  }
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const keysA = Object.keys(a);
    const keysB = Object.keys(b);
    return (
      keysA.join("\u0000") === keysB.join("\u0000") &&
      keysA.every((key) =>
        sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
      )
    );
  }
  return Object.is(a, b);
}

/** Strange values a field may get instead of its own. */
const oddValue = fc.oneof(
  fc.constantFrom<Json>(
    undefined,
    null,
    "",
    " ",
    "  x  ",
    "0",
    "-1",
    "1.234",
    "1e3",
    "abc",
    "EUR",
    "eur",
    "Auto",
  ),
  fc.constantFrom<Json>(0, -1, 1.5, Number.NaN, true, false, [], {}, [{}], "😀".repeat(30), "x".repeat(256)),
  fc.constantFrom<Json>("3f2504e0-4f89-11d3-9a0c-0305e82c3301", "2026-12-01T09:00:00+01:00", "1.00:00:10"),
  fc.string({ maxLength: 8 }),
);

/** Paths (as key lists) of every object key and array index in `value`. */
function pathsOf(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value))
    return value.flatMap((item, index) => [[...prefix, index], ...pathsOf(item, [...prefix, index])]);
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => [
      [...prefix, key],
      ...pathsOf(item, [...prefix, key]),
    ]);
  }
  return [];
}

type Mutation = { pick: number; kind: "replace" | "delete" | "extra-key"; value: Json };
const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  kind: fc.constantFrom("replace", "delete", "extra-key"),
  value: oddValue,
});

/** Applies mutations to a deep copy of `value`. */
function mutated(value: Json, mutations: Mutation[]): Json {
  const copy = structuredClone(value);
  for (const { pick, kind, value: shared } of mutations) {
    // fast-check hands out the same constant objects to every run: insert copies.
    const odd = structuredClone(shared);
    const paths = pathsOf(copy);
    if (paths.length === 0) return copy;
    const path = paths[pick % paths.length]!;
    const parent = path
      .slice(0, -1)
      .reduce<Json>((node, key) => (node as Record<string, Json>)[key], copy) as Record<
      string | number,
      Json
    >;
    const key = path[path.length - 1]!;
    if (kind === "replace") parent[key] = odd;
    else if (kind === "delete" && !Array.isArray(parent)) delete parent[key];
    else if (kind === "extra-key" && typeof parent[key] === "object" && parent[key] !== null) {
      (parent[key] as Record<string, Json>).unexpected = odd;
    }
  }
  return copy;
}

const guid = fc.uuid();
const decimal2 = fc.integer({ min: 1, max: 9_999_999 }).map((cents) => (cents / 100).toFixed(2));
const item = fc.record({
  id: fc.string({ minLength: 1, maxLength: 60 }),
  description: fc.string({ minLength: 1, maxLength: 80 }),
  unitPrice: fc.oneof(decimal2, fc.constantFrom("-5.00", "0", "12.5", "7")),
  quantity: fc.integer({ min: 0, max: 100_000_000 }).map(String),
  vat: fc.constantFrom("0", "14", "25.00", "100", "100.01", "12.345"),
});
const schedule = fc.oneof(
  fc.record({ preferSynchronous: fc.boolean() }),
  fc.record({
    relative: fc.array(fc.constantFrom("00:00:10", "1.00:00:10", "01.00:30:00", "24:00:00"), {
      maxLength: 3,
    }),
  }),
  fc.record({
    absolute: fc.array(fc.constantFrom("2026-12-01T09:00:00+01:00", "2026-02-30T10:00:00+01:00"), {
      maxLength: 3,
    }),
  }),
  fc.constant({}),
);
const request = fc.record(
  {
    customerToken: guid,
    storeId: fc.string({ maxLength: 10 }),
    order: fc.record(
      {
        items: fc.array(item, { minLength: 0, maxLength: 4 }),
        currency: fc.constantFrom("EUR", "SEK", "JPY", "XXX", "eur"),
        reference: fc.string({ maxLength: 55 }),
        actionReference: fc.string({ maxLength: 20 }),
        settlementReference: fc.string({ maxLength: 20 }),
        captureMode: fc.constantFrom("Auto", "Manual"),
      },
      { requiredKeys: ["items", "currency"] },
    ),
    attemptSchedule: schedule,
  },
  { requiredKeys: ["customerToken", "order"] },
);
const order = fc.record({
  orderId: guid,
  authorizationId: guid,
  customerToken: guid,
  storeId: fc.string({ maxLength: 5 }),
  reference: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }),
  currency: fc.constantFrom("EUR", "SEK"),
  status: fc.constantFrom("Authorized", "Captured", "PartiallyCaptured", "Cancelled", "Refunded"),
  totalAmount: decimal2,
  capturedAmount: decimal2,
  refundedAmount: decimal2,
  cancelledAmount: decimal2,
  captureMode: fc.constantFrom("Auto", "Manual"),
  createdAt: fc.constant("2026-11-25T10:00:00Z"),
  items: fc.array(
    fc.record({
      id: fc.string(),
      description: fc.string(),
      unitPrice: decimal2,
      quantity: fc.constant("1"),
      vat: fc.constant("25"),
    }),
    { maxLength: 2 },
  ),
});

const cases: Array<{ name: string; schema: z.ZodType; valid: fc.Arbitrary<Json>; compiledFully: boolean }> = [
  {
    name: "create-authorization request",
    schema: authorizationRequestSchema,
    valid: request,
    compiledFully: true,
  },
  {
    name: "create-authorization answer",
    schema: createAuthorizationResponseSchema,
    valid: fc.record({
      id: guid,
      data: fc.record({ authorizationId: guid, orderId: guid }, { requiredKeys: ["authorizationId"] }),
    }),
    compiledFully: true,
  },
  { name: "order", schema: orderSchema, valid: order, compiledFully: true },
  {
    name: "customer token",
    schema: customerTokenSchema,
    valid: fc.record({
      customerToken: guid,
      status: fc.constantFrom("Active", "Revoked"),
      currency: fc.constant("EUR"),
    }),
    compiledFully: false,
  },
  {
    name: "error envelope (loose objects: zod parses those parts)",
    schema: errorEnvelopeSchema,
    valid: fc.record({
      id: fc.string(),
      error: fc.record({
        code: fc.integer(),
        message: fc.string(),
        errors: fc.array(fc.record({ reason: fc.string(), message: fc.string() })),
      }),
    }),
    compiledFully: false,
  },
  {
    name: "webhook event (a discriminated union: zod parses it)",
    schema: webhookEventSchema,
    valid: fc.record({
      id: guid,
      type: fc.constantFrom("order.captured", "order.refunded"),
      createdAt: fc.constant("2026-11-25T10:00:00Z"),
      data: fc.record({ orderId: guid, amount: decimal2 }),
    }),
    compiledFully: false,
  },
];

describe.each(cases)("the fast path of the $name schema", ({ schema, valid, compiledFully }) => {
  const settings = [
    { freeze: false, generateCode: true, label: "" },
    { freeze: true, generateCode: true, label: " (frozen output)" },
    { freeze: false, generateCode: false, label: " (where code cannot be generated)" },
  ];
  for (const { freeze, generateCode, label } of settings) {
    const fast = fastParserOf(schema, { freeze, generateCode });

    it(`answers like zod or steps aside, on mutated inputs${label}`, () => {
      fc.assert(
        fc.property(valid, fc.array(mutation, { maxLength: 3 }), (base, mutations) => {
          const input = mutated(base, mutations);
          const before = structuredClone(input);
          const parsed = fast(input);
          expect(input).toStrictEqual(before);
          const reference = schema.safeParse(input);
          if (parsed !== FALL_BACK) {
            expect(reference.success).toBe(true);
            expect(sameValue(parsed, reference.data)).toBe(true);
            if (freeze && typeof parsed === "object" && parsed !== null)
              expect(Object.isFrozen(parsed)).toBe(true);
          }
          if (reference.success && compiledFully) expect(parsed).not.toBe(FALL_BACK);
        }),
        { numRuns: 1000 },
      );
    });
  }
});

describe("the fast path's own rules", () => {
  it("keeps a present key whose value is undefined and leaves an absent one absent, as zod does", () => {
    const fast = fastParserOf(authorizationRequestSchema);
    const base = {
      customerToken: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
      order: {
        items: [{ id: "a", description: "b", unitPrice: "1.00", quantity: "1", vat: "0" }],
        currency: "EUR",
      },
    };
    const withUndefined = fast({ ...base, storeId: undefined }) as Record<string, unknown>;
    expect(Object.keys(withUndefined)).toEqual(["customerToken", "storeId", "order"]);
    expect(Object.keys(fast(base) as object)).toEqual(["customerToken", "order"]);
    expect(sameValue(withUndefined, authorizationRequestSchema.parse({ ...base, storeId: undefined }))).toBe(
      true,
    );
  });

  it("steps aside for every invalid request, so zod names the issues", () => {
    const fast = fastParserOf(authorizationRequestSchema);
    expect(fast({ customerToken: "not-a-guid", order: {} })).toBe(FALL_BACK);
    expect(fast(null)).toBe(FALL_BACK);
    expect(fast([])).toBe(FALL_BACK);
  });
});
