import { createHash } from "node:crypto";
import type { AuthorizationRequest } from "@purchase-auth/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, orderFingerprint } from "../src/charges/order-fingerprint.js";

// Charges keep their order's fingerprint (PostgreSQL too): a repeated POST is compared with it, so
// the same order must hash to the same value in every version, or a paid cart reads as changed.

/** The first implementation, kept as the definition the faster one must equal. */
function referenceCanonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((entry) => referenceCanonicalJson(entry)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${referenceCanonicalJson(entry)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const TOKEN = "6f1c2b9e-4a7d-4c2e-9b1a-2d3e4f5a6b7c";

const coffee: AuthorizationRequest = {
  customerToken: TOKEN,
  order: {
    items: [
      {
        id: "sku-1",
        description: "Coffee beans 1 kg, batch 1",
        unitPrice: "24.90",
        quantity: "2",
        vat: "14",
      },
    ],
    currency: "EUR",
    reference: "order-1",
    captureMode: "Auto",
  },
  attemptSchedule: { preferSynchronous: true },
};

const tea: AuthorizationRequest = {
  customerToken: TOKEN,
  storeId: "0b6f9a5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b",
  order: {
    items: [
      { id: 'a"ü', description: "Tee ☕ \u2028 line", unitPrice: "1.50", quantity: "3", vat: "0" },
      { id: "b", description: "x", unitPrice: "2.00", quantity: "1", vat: "25.5" },
    ],
    currency: "SEK",
    reference: "order-2",
    captureMode: "Manual",
  },
};

describe("orderFingerprint", () => {
  it("gives the values charges were stored with", () => {
    expect(orderFingerprint(coffee, "49.80")).toBe(
      "899f77cef7180ea878753d4f822ff0b230bf9bc51a73fe9f0e9de7e7cc64c4b9",
    );
    expect(orderFingerprint(coffee, "29.50")).toBe(
      "9889f175ce1485b3ffb793c43f35f8be619ca8a778753477d27ac7d1b7652231",
    );
    expect(orderFingerprint(tea, "49.80")).toBe(
      "4c5aa3202c8b0402412c19c9ef453016000c8585a614c426af40164e7765f7c0",
    );
  });

  it("is the SHA-256 of the reference canonical form", () => {
    for (const [request, amount] of [
      [coffee, "49.80"],
      [tea, "7.00"],
    ] as const) {
      const canonical = referenceCanonicalJson({
        amount,
        currency: request.order.currency,
        captureMode: request.order.captureMode ?? null,
        storeId: request.storeId ?? null,
        items: request.order.items,
      });
      expect(orderFingerprint(request, amount)).toBe(createHash("sha256").update(canonical).digest("hex"));
    }
  });
});

describe("orderFingerprint on generated orders", () => {
  // Every order, plain or odd, must hash as the reference does, for every text (quotes, escapes,
  // astral and lone surrogates, U+2028).
  const text = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }));
  const item = fc.record(
    { id: text, description: text, unitPrice: text, quantity: text, vat: text },
    { requiredKeys: ["id", "description", "unitPrice", "quantity"] },
  );
  const odd = fc.oneof(fc.constant({ extra: "key" }), fc.constant({ id: 1 }), fc.constant(null));
  it("is the SHA-256 of the reference canonical form", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof({ weight: 9, arbitrary: item }, { weight: 1, arbitrary: odd }), { maxLength: 4 }),
        fc.constantFrom("EUR", "SEK"),
        fc.option(fc.constantFrom("Auto", "Manual"), { nil: undefined }),
        fc.option(text, { nil: undefined }),
        text,
        (items, currency, captureMode, storeId, amount) => {
          const request = {
            customerToken: TOKEN,
            ...(storeId === undefined ? {} : { storeId }),
            order: { items, currency, ...(captureMode === undefined ? {} : { captureMode }) },
          } as unknown as AuthorizationRequest;
          const canonical = referenceCanonicalJson({
            amount,
            currency,
            captureMode: captureMode ?? null,
            storeId: storeId ?? null,
            items,
          });
          expect(orderFingerprint(request, amount)).toBe(
            createHash("sha256").update(canonical).digest("hex"),
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("orderFingerprint in a patched environment", () => {
  it("is unchanged by a toJSON a library adds to Object.prototype or Array.prototype", () => {
    const expected = orderFingerprint(tea, "49.80");
    for (const prototype of [Object.prototype, Array.prototype]) {
      Object.defineProperty(prototype, "toJSON", { value: () => ({}), configurable: true, writable: true });
      try {
        expect(orderFingerprint(tea, "49.80")).toBe(expected);
      } finally {
        delete (prototype as { toJSON?: unknown }).toJSON;
      }
    }
  });

  it("hashes an item's non-enumerable key as the canonical form does (left out)", () => {
    const item = Object.defineProperty({ ...coffee.order.items[0]! }, "vat", {
      value: "14",
      enumerable: false,
    });
    const request = { ...coffee, order: { ...coffee.order, items: [item] } };
    const canonical = referenceCanonicalJson({
      amount: "49.80",
      currency: "EUR",
      captureMode: "Auto",
      storeId: null,
      items: [item],
    });
    expect(orderFingerprint(request, "49.80")).toBe(createHash("sha256").update(canonical).digest("hex"));
  });
});

describe("canonicalJson", () => {
  it("writes what the reference implementation writes", () => {
    const values: unknown[] = [
      null,
      undefined,
      0,
      -1.5,
      true,
      "",
      'quote " and \\ and \u0000 and ☕',
      [],
      {},
      [undefined, null, 1],
      { b: 1, a: undefined, c: null },
      { z: [{ y: "1", x: { "\u00e9": 1, e: 2, E: 3, "10": 4, "9": 5 } }], a: [] },
      { "": "empty key", " ": "space", "\ud83d\ude00": "astral", "\uffff": "bmp" },
      new Date(0),
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(referenceCanonicalJson(value));
  });
});
