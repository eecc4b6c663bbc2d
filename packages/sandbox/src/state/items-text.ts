import type { Item } from "@purchase-auth/core";
import { NOTHING_TO_ESCAPE } from "../core/json-text.js";

/**
 * An order's items as kept by the authorization and its order: their JSON text, one flat string.
 * Only the Order resource shows them, so the records keep no array, no object and no fresh
 * description per item (JSON.parse shares none of them) for the thousands of orders the stores hold.
 * Every field of a validated item is a string, so the text gives back exactly what was validated.
 */
export type ItemsText = string & { readonly __itemsText: unique symbol };

/** The text between the quotes JSON.stringify would put around `text`. */
function escaped(text: string): string {
  return NOTHING_TO_ESCAPE.test(text) ? text : JSON.stringify(text).slice(1, -1);
}

/**
 * The fields of core's item schema in its order (validated items carry these and no others; a test
 * holds this to the schema). Written directly: JSON.stringify of the validated objects cost ~1 µs
 * per create, this a quarter of that, and a create with small stores is ~10 µs. One `join` of all
 * the pieces makes one flat string (concatenations would keep a tree of them).
 */
export function itemsToText(items: readonly Item[]): ItemsText {
  const pieces: string[] = ["["];
  for (let index = 0; index < items.length; index++) {
    const { id, description, unitPrice, quantity, vat } = items[index]!;
    pieces.push(
      index === 0 ? '{"id":"' : ',{"id":"',
      escaped(id),
      '","description":"',
      escaped(description),
      '","unitPrice":"',
      escaped(unitPrice),
      '","quantity":"',
      escaped(quantity),
      '","vat":"',
      escaped(vat),
      '"}',
    );
  }
  pieces.push("]");
  return pieces.join("") as ItemsText;
}

/** Fresh objects on every read: a caller may change them without changing the record. */
export function itemsFromText(text: ItemsText): Item[] {
  return JSON.parse(text) as Item[];
}
