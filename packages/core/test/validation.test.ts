import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type AuthorizationRequestInput,
  checkAuthorizationRequest,
  ValidationError,
  type ValidationIssue,
  validateAuthorizationRequest,
} from "../src/index.js";
import { TOKEN, validRequest } from "./fixtures.js";

type Mutation = (request: AuthorizationRequestInput) => void;

function issuesOf(mutate: Mutation): ValidationIssue[] {
  const request = structuredClone(validRequest());
  mutate(request);
  const result = checkAuthorizationRequest(request);
  if (result.success) throw new Error("expected the request to be rejected");
  return result.issues;
}

function accepts(mutate: Mutation) {
  const request = structuredClone(validRequest());
  mutate(request);
  const result = checkAuthorizationRequest(request);
  if (!result.success) throw new Error(`expected acceptance, got ${JSON.stringify(result.issues)}`);
  return result.request;
}

const item = (request: AuthorizationRequestInput) => request.order.items[0]!;

// Every rule of specification sections 2 and 8: the failing case names the field and the rule, and
// the passing case at the boundary shows the rule is not stricter than the specification.
const rules: Array<{ name: string; fail: Mutation; path: string; rule: string; pass: Mutation }> = [
  {
    name: "customerToken is required",
    fail: (r) => delete (r as Partial<typeof r>).customerToken,
    path: "customerToken",
    rule: "required",
    pass: (r) => (r.customerToken = TOKEN.toUpperCase()),
  },
  {
    name: "customerToken is a GUID",
    fail: (r) => (r.customerToken = "not-a-guid"),
    path: "customerToken",
    rule: "guid",
    pass: (r) => (r.customerToken = TOKEN),
  },
  {
    name: "storeId is not empty",
    fail: (r) => (r.storeId = "  "),
    path: "storeId",
    rule: "min_length",
    pass: (r) => (r.storeId = "store-1"),
  },
  {
    name: "order is required",
    fail: (r) => delete (r as Partial<typeof r>).order,
    path: "order",
    rule: "required",
    pass: () => {},
  },
  {
    name: "items has at least one item",
    fail: (r) => (r.order.items = []),
    path: "order.items",
    rule: "min_items",
    pass: () => {},
  },
  {
    name: "currency is ISO 4217",
    fail: (r) => (r.order.currency = "EUX"),
    path: "order.currency",
    rule: "currency",
    pass: (r) => (r.order.currency = "SEK"),
  },
  {
    name: "reference at most 50",
    fail: (r) => (r.order.reference = "r".repeat(51)),
    path: "order.reference",
    rule: "max_length",
    pass: (r) => (r.order.reference = "r".repeat(50)),
  },
  {
    name: "actionReference at most 255",
    fail: (r) => (r.order.actionReference = "a".repeat(256)),
    path: "order.actionReference",
    rule: "max_length",
    pass: (r) => (r.order.actionReference = "a".repeat(255)),
  },
  {
    name: "settlementReference at most 50",
    fail: (r) => (r.order.settlementReference = "s".repeat(51)),
    path: "order.settlementReference",
    rule: "max_length",
    pass: (r) => (r.order.settlementReference = "s".repeat(50)),
  },
  {
    name: "captureMode is Auto or Manual",
    fail: (r) => (r.order.captureMode = "auto" as "Auto"),
    path: "order.captureMode",
    rule: "enum",
    pass: (r) => (r.order.captureMode = "Manual"),
  },
  {
    name: "item id at most 50 after trimming",
    fail: (r) => (item(r).id = "i".repeat(51)),
    path: "order.items[0].id",
    rule: "max_length",
    pass: (r) => (item(r).id = `  ${"i".repeat(50)}  `),
  },
  {
    name: "item id is not empty",
    fail: (r) => (item(r).id = "   "),
    path: "order.items[0].id",
    rule: "min_length",
    pass: (r) => (item(r).id = "x"),
  },
  {
    name: "item description is required",
    fail: (r) => delete (item(r) as Partial<ReturnType<typeof item>>).description,
    path: "order.items[0].description",
    rule: "required",
    pass: (r) => (item(r).description = "d".repeat(80)),
  },
  {
    name: "unitPrice is a decimal",
    fail: (r) => (item(r).unitPrice = "12,50"),
    path: "order.items[0].unitPrice",
    rule: "decimal",
    pass: (r) => (item(r).unitPrice = "0.5"),
  },
  {
    name: "unitPrice has at most 2 decimals",
    fail: (r) => (item(r).unitPrice = "1.005"),
    path: "order.items[0].unitPrice",
    rule: "decimals",
    pass: (r) => (item(r).unitPrice = "1.05"),
  },
  {
    name: "quantity is at least 1",
    fail: (r) => (item(r).quantity = "0"),
    path: "order.items[0].quantity",
    rule: "min",
    pass: (r) => (item(r).quantity = "1"),
  },
  {
    name: "quantity is at most 99999999",
    fail: (r) => (item(r).quantity = "100000000"),
    path: "order.items[0].quantity",
    rule: "max",
    pass: (r) => (item(r).quantity = "99999999"),
  },
  {
    name: "quantity is whole",
    fail: (r) => (item(r).quantity = "1.5"),
    path: "order.items[0].quantity",
    rule: "integer",
    pass: (r) => (item(r).quantity = 3),
  },
  {
    name: "vat is at least 0",
    fail: (r) => (item(r).vat = "-1"),
    path: "order.items[0].vat",
    rule: "min",
    pass: (r) => (item(r).vat = "0"),
  },
  {
    name: "vat is at most 100",
    fail: (r) => (item(r).vat = "100.01"),
    path: "order.items[0].vat",
    rule: "max",
    pass: (r) => (item(r).vat = "100"),
  },
  {
    name: "vat has at most 2 decimals",
    fail: (r) => (item(r).vat = "12.345"),
    path: "order.items[0].vat",
    rule: "decimals",
    pass: (r) => (item(r).vat = "12.34"),
  },
  {
    name: "relative entries are d.hh:mm:ss or hh:mm:ss",
    fail: (r) => (r.attemptSchedule = { relative: ["1.24:00:00"] }),
    path: "attemptSchedule.relative[0]",
    rule: "timespan",
    pass: (r) => (r.attemptSchedule = { relative: ["00.00:00:00", "99.23:59:59", "1.00:00:10", "00:00:10"] }),
  },
  {
    name: "relative hours at most 23",
    fail: (r) => (r.attemptSchedule = { relative: ["00.24:00:00"] }),
    path: "attemptSchedule.relative[0]",
    rule: "timespan",
    pass: () => {},
  },
  {
    name: "absolute entries are yyyy-MM-ddTHH:mm:ss±hh:mm",
    fail: (r) => (r.attemptSchedule = { absolute: ["2026-12-01T09:00:00Z"] }),
    path: "attemptSchedule.absolute[0]",
    rule: "timestamp",
    pass: (r) =>
      (r.attemptSchedule = { absolute: ["2026-12-01T09:00:00+01:00", "2028-02-29T23:59:59-14:00"] }),
  },
  {
    name: "absolute dates exist",
    fail: (r) => (r.attemptSchedule = { absolute: ["2027-02-29T09:00:00+00:00"] }),
    path: "attemptSchedule.absolute[0]",
    rule: "timestamp",
    pass: () => {},
  },
  {
    name: "at most one schedule field",
    fail: (r) => (r.attemptSchedule = { relative: ["00.01:00:00"], preferSynchronous: true }),
    path: "attemptSchedule",
    rule: "one_schedule",
    pass: (r) => (r.attemptSchedule = { preferSynchronous: false }),
  },
  {
    name: "the order adds up to more than 0",
    fail: (r) => (item(r).unitPrice = "-1"),
    path: "order.items",
    rule: "positive_total",
    pass: (r) =>
      r.order.items.push({
        id: "discount",
        description: "Discount",
        unitPrice: "-49.79",
        quantity: 1,
        vat: 14,
      }),
  },
];

describe("validation rules", () => {
  it.each(rules)("$name", ({ fail, path, rule, pass }) => {
    const issues = issuesOf(fail);
    expect(issues).toContainEqual(expect.objectContaining({ path, rule }));
    expect(issues.find((issue) => issue.path === path)?.message.startsWith(path)).toBe(true);
    accepts(pass);
  });

  it("reports every problem at once", () => {
    const issues = issuesOf((r) => {
      r.customerToken = "x";
      item(r).vat = "200";
      item(r).quantity = "0";
    });
    expect(issues.map((issue) => issue.path).sort()).toEqual(
      ["customerToken", "order.items[0].quantity", "order.items[0].vat"].sort(),
    );
  });

  it("throws a ValidationError that names field and rule", () => {
    const request = validRequest({ customerToken: "nope" });
    expect(() => validateAuthorizationRequest(request)).toThrow(ValidationError);
    try {
      validateAuthorizationRequest(request);
    } catch (error) {
      expect(ValidationError.isInstance(error)).toBe(true);
      expect((error as ValidationError).message).toBe("Invalid request: customerToken must be a GUID");
      expect((error as ValidationError).issues).toEqual([
        { path: "customerToken", rule: "guid", message: "customerToken must be a GUID" },
      ]);
    }
  });
});

describe("friendly input", () => {
  it("trims id and description and cuts the description to 50 characters", () => {
    const request = accepts((r) => {
      item(r).id = "  sku-9  ";
      item(r).description = `  ${"d".repeat(70)}  `;
    });
    expect(request.order.items[0]).toMatchObject({ id: "sku-9", description: "d".repeat(50) });
  });

  it("counts the description's characters as code points when cutting it, as every other limit", () => {
    const request = accepts((r) => (item(r).description = `${"d".repeat(49)}😀tail`));
    expect(request.order.items[0]!.description).toBe(`${"d".repeat(49)}😀`);
    const emoji = accepts((r) => (item(r).description = "😀".repeat(60)));
    expect(emoji.order.items[0]!.description).toBe("😀".repeat(50));
    // A lone surrogate is one character too, and kept as it came.
    const lone = accepts((r) => (item(r).description = `${"d".repeat(49)}\uD83Dtail`));
    expect(lone.order.items[0]!.description).toBe(`${"d".repeat(49)}\uD83D`);
  });

  it("serialises numbers as exact decimal strings, prices with 2 decimals", () => {
    const request = accepts((r) => {
      r.order.items[0] = { id: "a", description: "b", unitPrice: 12.5, quantity: 3, vat: 25 };
    });
    expect(request.order.items[0]).toMatchObject({ unitPrice: "12.50", quantity: "3", vat: "25" });
  });

  it("converts any item of many, wherever it stands, and keeps their order", () => {
    const wire = { id: "w", description: "wire", unitPrice: "1.00", quantity: "1", vat: "0" };
    const request = accepts((r) => {
      r.order.items = [wire, { ...wire, id: "n", unitPrice: 2 }, wire, { ...wire, id: "q", quantity: 4 }];
    });
    expect(request.order.items.map((line) => [line.id, line.unitPrice, line.quantity])).toEqual([
      ["w", "1.00", "1"],
      ["n", "2.00", "1"],
      ["w", "1.00", "1"],
      ["q", "1.00", "4"],
    ]);
  });

  it("rejects a float artefact instead of rounding it", () => {
    const issues = issuesOf((r) => (item(r).unitPrice = 0.1 + 0.2));
    expect(issues).toContainEqual(
      expect.objectContaining({ path: "order.items[0].unitPrice", rule: "decimals" }),
    );
  });

  it("accepts lower-case currency codes and Date schedule entries", () => {
    const request = accepts((r) => {
      r.order.currency = "eur";
      r.attemptSchedule = { absolute: [new Date("2026-12-01T08:00:00.000Z")] };
    });
    expect(request.order.currency).toBe("EUR");
    expect(request.attemptSchedule?.absolute).toEqual(["2026-12-01T08:00:00+00:00"]);
  });

  it("rejects wrong types with the field's path", () => {
    const issues = issuesOf((r) => (item(r).unitPrice = { value: 1 } as unknown as string));
    expect(issues).toContainEqual(
      expect.objectContaining({ path: "order.items[0].unitPrice", rule: "type" }),
    );
  });
});

describe("properties", () => {
  const decimal2 = fc
    .tuple(fc.integer({ min: -99_999, max: 99_999 }), fc.integer({ min: 0, max: 99 }))
    .map(([whole, cents]) => `${whole}.${String(cents).padStart(2, "0")}`);
  const validItem = fc.record({
    id: fc.string({ minLength: 1, maxLength: 50 }).filter((s) => s.trim().length > 0 && s.trim() === s),
    description: fc.string({ minLength: 1, maxLength: 120 }).filter((s) => s.trim().length > 0),
    unitPrice: fc.integer({ min: 1, max: 9_999_999 }).map((cents) => (cents / 100).toFixed(2)),
    quantity: fc.integer({ min: 1, max: 99_999_999 }).map(String),
    vat: fc.integer({ min: 0, max: 10_000 }).map((hundredths) => (hundredths / 100).toFixed(2)),
  });
  const validRequestArb = fc.record({
    customerToken: fc.uuid(),
    order: fc.record({
      items: fc.array(validItem, { minLength: 1, maxLength: 5 }),
      currency: fc.constantFrom("EUR", "SEK", "NOK", "USD", "JPY"),
      reference: fc.string({ maxLength: 50 }),
    }),
  });

  it("accepts every valid request", () => {
    fc.assert(
      fc.property(validRequestArb, (request) => {
        expect(checkAuthorizationRequest(request).success).toBe(true);
      }),
    );
  });

  it("rejects a mutated field with that field's path", () => {
    const mutations: Array<{
      path: (i: number) => string;
      apply: (r: AuthorizationRequestInput, i: number) => void;
    }> = [
      { path: (i) => `order.items[${i}].vat`, apply: (r, i) => (r.order.items[i]!.vat = "100.5") },
      { path: (i) => `order.items[${i}].quantity`, apply: (r, i) => (r.order.items[i]!.quantity = "0") },
      {
        path: (i) => `order.items[${i}].unitPrice`,
        apply: (r, i) => (r.order.items[i]!.unitPrice = "1.001"),
      },
      { path: (i) => `order.items[${i}].id`, apply: (r, i) => (r.order.items[i]!.id = "x".repeat(51)) },
    ];
    fc.assert(
      fc.property(validRequestArb, fc.nat(), fc.constantFrom(...mutations), (request, index, mutation) => {
        const target = index % request.order.items.length;
        mutation.apply(request, target);
        const result = checkAuthorizationRequest(request);
        expect(result.success).toBe(false);
        if (!result.success)
          expect(result.issues.map((issue) => issue.path)).toContain(mutation.path(target));
      }),
    );
  });

  it("keeps every valid 2-decimal amount exact through serialisation", () => {
    fc.assert(
      fc.property(decimal2, (amount) => {
        const request = validRequest();
        request.order.items = [
          { id: "a", description: "a", unitPrice: "100000.00", quantity: 1, vat: 0 },
          { id: "b", description: "b", unitPrice: amount, quantity: 1, vat: 0 },
        ];
        const result = checkAuthorizationRequest(request);
        expect(result.success && result.request.order.items[1]!.unitPrice).toBe(amount);
      }),
    );
  });
});

describe("a checked request", () => {
  it("is frozen, recognised, and not checked again", () => {
    const result = checkAuthorizationRequest(validRequest());
    if (!result.success) throw new Error("expected a valid request");
    expect(Object.isFrozen(result.request)).toBe(true);
    expect(Object.isFrozen(result.request.order.items[0])).toBe(true);
    expect(() => {
      (result.request.order.items[0] as { unitPrice: string }).unitPrice = "999999.00";
    }).toThrow(TypeError);
    expect(checkAuthorizationRequest(result.request)).toEqual({ success: true, request: result.request });
    expect(validateAuthorizationRequest(result.request)).toBe(result.request);
  });

  it("comes from checkAuthorizationRequest only: validateAuthorizationRequest returns an unfrozen copy it does not remember", () => {
    const input = validRequest();
    const validated = validateAuthorizationRequest(input);
    const checked = checkAuthorizationRequest(input);
    if (!checked.success) throw new Error("expected a valid request");
    expect(validated).toEqual(checked.request);
    expect(Object.isFrozen(validated)).toBe(false);
    // Not remembered as checked: a change after validation is caught by the next check.
    (validated.order.items[0] as { vat: string }).vat = "101";
    expect(() => validateAuthorizationRequest(validated)).toThrow(ValidationError);
    expect(checkAuthorizationRequest(validated).success).toBe(false);
  });

  it("leaves a look-alike that was never checked to be checked in full", () => {
    const result = checkAuthorizationRequest(validRequest());
    if (!result.success) throw new Error("expected a valid request");
    const copy = structuredClone(result.request);
    copy.order.items[0]!.vat = "101";
    expect(checkAuthorizationRequest(copy).success).toBe(false);
  });
});
