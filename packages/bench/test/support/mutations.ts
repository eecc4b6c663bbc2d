import type { WireBody } from "./wire-arbitraries.js";

// Near-valid requests: each mutation breaks (or just reaches) ONE rule of the specification, on a
// valid body. `expect` is what core and the sandbox must both say: accepted, or exactly one issue.

export type Expectation = "accepted" | { path: string; rule: string };

export interface Mutation {
  name: string;
  apply(body: WireBody): unknown;
  expect: Expectation;
}

const GUID = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

/** A copy of `body` with `change` applied to it (the generated body stays untouched). */
function edit(change: (body: WireBody) => void): (body: WireBody) => unknown {
  return (body) => {
    const copy = structuredClone(body);
    change(copy);
    return copy;
  };
}

const onBody = (field: string, value: unknown) =>
  edit((body) => {
    (body as Record<string, unknown>)[field] = value;
  });
const onOrder = (field: string, value: unknown) =>
  edit((body) => {
    body.order[field] = value;
  });
const onItem = (field: string, value: unknown) =>
  edit((body) => {
    body.order.items[0]![field] = value;
  });
const withSchedule = (schedule: unknown) =>
  edit((body) => {
    body.attemptSchedule = schedule as Record<string, unknown>;
  });
const without = (remove: (body: WireBody) => void) => edit(remove);

const reject = (path: string, rule: string): Expectation => ({ path, rule });
const item = (field: string) => `order.items[0].${field}`;

export const MUTATIONS: readonly Mutation[] = [
  // Lengths: the limit is allowed, one more is not.
  { name: "reference of 50", apply: onOrder("reference", "r".repeat(50)), expect: "accepted" },
  {
    name: "reference of 51",
    apply: onOrder("reference", "r".repeat(51)),
    expect: reject("order.reference", "max_length"),
  },
  { name: "actionReference of 255", apply: onOrder("actionReference", "a".repeat(255)), expect: "accepted" },
  {
    name: "actionReference of 256",
    apply: onOrder("actionReference", "a".repeat(256)),
    expect: reject("order.actionReference", "max_length"),
  },
  {
    name: "settlementReference of 50",
    apply: onOrder("settlementReference", "s".repeat(50)),
    expect: "accepted",
  },
  {
    name: "settlementReference of 51",
    apply: onOrder("settlementReference", "s".repeat(51)),
    expect: reject("order.settlementReference", "max_length"),
  },
  { name: "item id of 50", apply: onItem("id", "i".repeat(50)), expect: "accepted" },
  { name: "item id of 51", apply: onItem("id", "i".repeat(51)), expect: reject(item("id"), "max_length") },
  {
    name: "item id of 50 inside white-space",
    apply: onItem("id", ` ${"i".repeat(50)} `),
    expect: "accepted",
  },
  { name: "blank item id", apply: onItem("id", "   "), expect: reject(item("id"), "min_length") },
  {
    name: "empty description",
    apply: onItem("description", ""),
    expect: reject(item("description"), "min_length"),
  },
  {
    name: "description of 200 (cut, not rejected)",
    apply: onItem("description", "d".repeat(200)),
    expect: "accepted",
  },
  // Quantity 1 to 99,999,999, whole.
  { name: "quantity 0", apply: onItem("quantity", "0"), expect: reject(item("quantity"), "min") },
  { name: "quantity 1", apply: onItem("quantity", "1"), expect: "accepted" },
  { name: "quantity 99999999", apply: onItem("quantity", "99999999"), expect: "accepted" },
  {
    name: "quantity 100000000",
    apply: onItem("quantity", "100000000"),
    expect: reject(item("quantity"), "max"),
  },
  { name: "quantity -1", apply: onItem("quantity", "-1"), expect: reject(item("quantity"), "min") },
  { name: "quantity 1.5", apply: onItem("quantity", "1.5"), expect: reject(item("quantity"), "integer") },
  { name: "quantity abc", apply: onItem("quantity", "abc"), expect: reject(item("quantity"), "integer") },
  // VAT 0 to 100, at most 2 decimals.
  { name: "vat 100", apply: onItem("vat", "100"), expect: "accepted" },
  { name: "vat 100.00", apply: onItem("vat", "100.00"), expect: "accepted" },
  { name: "vat 100.01", apply: onItem("vat", "100.01"), expect: reject(item("vat"), "max") },
  { name: "vat 0", apply: onItem("vat", "0"), expect: "accepted" },
  { name: "vat -0.01", apply: onItem("vat", "-0.01"), expect: reject(item("vat"), "min") },
  { name: "vat with 3 decimals", apply: onItem("vat", "12.345"), expect: reject(item("vat"), "decimals") },
  { name: "vat in exponent form", apply: onItem("vat", "1e2"), expect: reject(item("vat"), "decimal") },
  // Unit price: any sign, at most 2 decimals, a plain decimal.
  { name: "unitPrice with 2 decimals", apply: onItem("unitPrice", "12.34"), expect: "accepted" },
  {
    name: "unitPrice with 3 decimals",
    apply: onItem("unitPrice", "12.345"),
    expect: reject(item("unitPrice"), "decimals"),
  },
  {
    name: "unitPrice in exponent form",
    apply: onItem("unitPrice", "1e3"),
    expect: reject(item("unitPrice"), "decimal"),
  },
  {
    name: "unitPrice with a plus sign",
    apply: onItem("unitPrice", "+1.00"),
    expect: reject(item("unitPrice"), "decimal"),
  },
  {
    name: "unitPrice with white-space",
    apply: onItem("unitPrice", " 1.00"),
    expect: reject(item("unitPrice"), "decimal"),
  },
  {
    name: "unitPrice with a trailing point",
    apply: onItem("unitPrice", "1."),
    expect: reject(item("unitPrice"), "decimal"),
  },
  {
    name: "unitPrice without a whole part",
    apply: onItem("unitPrice", ".50"),
    expect: reject(item("unitPrice"), "decimal"),
  },
  {
    name: "order adding up to 0",
    apply: edit((body) => {
      body.order.items = [{ ...body.order.items[0]!, unitPrice: "0.00" }];
    }),
    expect: reject("order.items", "positive_total"),
  },
  // Identifiers and codes.
  {
    name: "customerToken not a GUID",
    apply: onBody("customerToken", "not-a-guid"),
    expect: reject("customerToken", "guid"),
  },
  {
    name: "customerToken one digit short",
    apply: onBody("customerToken", GUID.slice(1)),
    expect: reject("customerToken", "guid"),
  },
  {
    name: "customerToken in braces",
    apply: onBody("customerToken", `{${GUID}}`),
    expect: reject("customerToken", "guid"),
  },
  {
    name: "customerToken with a non-hex digit",
    apply: onBody("customerToken", `g${GUID.slice(1)}`),
    expect: reject("customerToken", "guid"),
  },
  { name: "currency EURO", apply: onOrder("currency", "EURO"), expect: reject("order.currency", "currency") },
  { name: "currency ABC", apply: onOrder("currency", "ABC"), expect: reject("order.currency", "currency") },
  { name: "empty currency", apply: onOrder("currency", ""), expect: reject("order.currency", "currency") },
  {
    name: "captureMode in lower case",
    apply: onOrder("captureMode", "auto"),
    expect: reject("order.captureMode", "enum"),
  },
  {
    name: "blank storeId",
    apply: onBody("storeId", " "),
    expect: reject("storeId", "min_length"),
  },
  // Schedule formats and the one-schedule rule.
  { name: "relative 01.00:00:00", apply: withSchedule({ relative: ["01.00:00:00"] }), expect: "accepted" },
  // The forms the service's own parser accepts: any number of days, or none.
  {
    name: "relative with a 1-digit day",
    apply: withSchedule({ relative: ["1.00:00:10"] }),
    expect: "accepted",
  },
  { name: "relative of 100 days", apply: withSchedule({ relative: ["100.00:00:00"] }), expect: "accepted" },
  {
    name: "relative with a 1-digit hour",
    apply: withSchedule({ relative: ["1.2:00:00"] }),
    expect: reject("attemptSchedule.relative[0]", "timespan"),
  },
  {
    name: "relative hour 24",
    apply: withSchedule({ relative: ["01.24:00:00"] }),
    expect: reject("attemptSchedule.relative[0]", "timespan"),
  },
  {
    name: "relative minute 60",
    apply: withSchedule({ relative: ["00.00:60:00"] }),
    expect: reject("attemptSchedule.relative[0]", "timespan"),
  },
  { name: "relative without days", apply: withSchedule({ relative: ["01:00:00"] }), expect: "accepted" },
  // An empty schedule is allowed by the specification (2.4): one attempt as soon as possible.
  { name: "empty relative", apply: withSchedule({ relative: [] }), expect: "accepted" },
  { name: "empty absolute", apply: withSchedule({ absolute: [] }), expect: "accepted" },
  {
    name: "absolute with an offset",
    apply: withSchedule({ absolute: ["2026-01-01T10:00:00+01:00"] }),
    expect: "accepted",
  },
  {
    name: "absolute 30 February",
    apply: withSchedule({ absolute: ["2026-02-30T10:00:00+01:00"] }),
    expect: reject("attemptSchedule.absolute[0]", "timestamp"),
  },
  {
    name: "absolute in Z form",
    apply: withSchedule({ absolute: ["2026-01-01T10:00:00Z"] }),
    expect: reject("attemptSchedule.absolute[0]", "timestamp"),
  },
  {
    name: "absolute with milliseconds",
    apply: withSchedule({ absolute: ["2026-01-01T10:00:00.000+01:00"] }),
    expect: reject("attemptSchedule.absolute[0]", "timestamp"),
  },
  {
    name: "absolute offset +15:00",
    apply: withSchedule({ absolute: ["2026-01-01T10:00:00+15:00"] }),
    expect: reject("attemptSchedule.absolute[0]", "timestamp"),
  },
  {
    name: "absolute with a space",
    apply: withSchedule({ absolute: ["2026-01-01 10:00:00+01:00"] }),
    expect: reject("attemptSchedule.absolute[0]", "timestamp"),
  },
  {
    name: "relative and preferSynchronous",
    apply: withSchedule({ relative: ["00.01:00:00"], preferSynchronous: true }),
    expect: reject("attemptSchedule", "one_schedule"),
  },
  {
    name: "absolute and relative",
    apply: withSchedule({ absolute: ["2026-01-01T10:00:00+01:00"], relative: ["00.01:00:00"] }),
    expect: reject("attemptSchedule", "one_schedule"),
  },
  {
    name: "preferSynchronous false and absolute",
    apply: withSchedule({ preferSynchronous: false, absolute: ["2026-01-01T10:00:00+01:00"] }),
    expect: reject("attemptSchedule", "one_schedule"),
  },
  { name: "empty schedule", apply: withSchedule({}), expect: "accepted" },
  // Items.
  { name: "no items", apply: onOrder("items", []), expect: reject("order.items", "min_items") },
  // Missing required fields.
  {
    name: "no customerToken",
    apply: without((b) => void delete (b as Partial<WireBody>).customerToken),
    expect: reject("customerToken", "required"),
  },
  {
    name: "no order",
    apply: without((b) => void delete (b as Partial<WireBody>).order),
    expect: reject("order", "required"),
  },
  {
    name: "no items field",
    apply: without((b) => void delete (b.order as Partial<WireBody["order"]>).items),
    expect: reject("order.items", "required"),
  },
  {
    name: "no currency",
    apply: without((b) => void delete b.order.currency),
    expect: reject("order.currency", "required"),
  },
  ...["id", "description", "unitPrice", "quantity", "vat"].map((field) => ({
    name: `no item ${field}`,
    apply: without((b) => void delete b.order.items[0]![field]),
    expect: reject(item(field), "required"),
  })),
  // Wrong JSON types (numbers for amounts excepted: core accepts those on purpose, the wire does not).
  {
    name: "customerToken a number",
    apply: onBody("customerToken", 123),
    expect: reject("customerToken", "type"),
  },
  {
    name: "order a string",
    apply: onBody("order", "x"),
    expect: reject("order", "type"),
  },
  { name: "items an object", apply: onOrder("items", {}), expect: reject("order.items", "type") },
  {
    name: "item null",
    apply: onOrder("items", [null]),
    expect: reject("order.items[0]", "type"),
  },
  { name: "item id a number", apply: onItem("id", 7), expect: reject(item("id"), "type") },
  { name: "unitPrice true", apply: onItem("unitPrice", true), expect: reject(item("unitPrice"), "type") },
  { name: "unitPrice null", apply: onItem("unitPrice", null), expect: reject(item("unitPrice"), "type") },
  { name: "quantity an array", apply: onItem("quantity", ["1"]), expect: reject(item("quantity"), "type") },
  { name: "vat an object", apply: onItem("vat", { value: "14" }), expect: reject(item("vat"), "type") },
  { name: "currency a number", apply: onOrder("currency", 978), expect: reject("order.currency", "type") },
  { name: "reference a number", apply: onOrder("reference", 5), expect: reject("order.reference", "type") },
  { name: "reference null", apply: onOrder("reference", null), expect: reject("order.reference", "type") },
  { name: "storeId a number", apply: onBody("storeId", 5), expect: reject("storeId", "type") },
  {
    name: "preferSynchronous a string",
    apply: withSchedule({ preferSynchronous: "true" }),
    expect: reject("attemptSchedule.preferSynchronous", "type"),
  },
  {
    name: "relative a string",
    apply: withSchedule({ relative: "01.00:00:00" }),
    expect: reject("attemptSchedule.relative", "type"),
  },
  { name: "attemptSchedule null", apply: withSchedule(null), expect: reject("attemptSchedule", "type") },
  { name: "body an array", apply: () => [], expect: reject("(request)", "type") },
  { name: "body a string", apply: () => "authorize", expect: reject("(request)", "type") },
  { name: "body null", apply: () => null, expect: reject("(request)", "type") },
];
