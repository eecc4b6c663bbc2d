import { itemSchema } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { SeededRandom } from "../src/core/prng.js";
import { itemsFromText, itemsToText } from "../src/state/items-text.js";
import { awkwardText } from "./awkward-text.js";

// itemsToText writes the items' JSON itself (JSON.stringify of the validated objects was the
// dearest step of a create). Its text must be JSON.stringify's for every item, unusual text included,
// and it must know every field of core's item schema.

/** Mostly plain text, now and then one JSON.stringify escapes or keeps as it is. */
const randomText = (random: SeededRandom) =>
  awkwardText(random, "abcXYZ019 -.,", { maxLength: 30, awkwardShare: 0.2 });

describe("itemsToText", () => {
  it("writes the fields of core's item schema, in its order", () => {
    expect(Object.keys(itemSchema.shape)).toEqual(["id", "description", "unitPrice", "quantity", "vat"]);
  });

  it("is only given items whose every field is present and a string (the text writes each in quotes)", () => {
    const valid = { id: "sku-1", description: "Beans", unitPrice: "1.00", quantity: "1", vat: "14" };
    const parsed = itemSchema.parse(valid);
    for (const value of Object.values(parsed)) expect(typeof value).toBe("string");
    for (const field of Object.keys(valid)) {
      const missing: Record<string, string> = { ...valid };
      delete missing[field];
      expect(itemSchema.safeParse(missing).success, `${field} missing`).toBe(false);
    }
  });

  it("is JSON.stringify's text for 5,000 generated orders, with quotes, backslashes, controls and surrogates (seed 7)", () => {
    const random = new SeededRandom(7);
    for (let count = 0; count < 5_000; count++) {
      const items = Array.from({ length: 1 + Math.floor(random.next() * 3) }, () => ({
        id: randomText(random),
        description: randomText(random),
        unitPrice: randomText(random),
        quantity: randomText(random),
        vat: randomText(random),
      }));
      const text = itemsToText(items);
      expect(text).toBe(JSON.stringify(items));
      expect(itemsFromText(text)).toStrictEqual(items);
    }
  });
});
