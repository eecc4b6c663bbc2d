import type { Item } from "@purchase-auth/core";

/**
 * An order's items as kept by the authorization and its order: their JSON text, one flat string.
 * Only the Order resource shows them, so the records keep no array, no object and no fresh
 * description per item (JSON.parse shares none of them) for the thousands of orders the stores hold.
 * Every field of a validated item is a string, so the text gives back exactly what was validated.
 */
export type ItemsText = string & { readonly __itemsText: unique symbol };

export function itemsToText(items: readonly Item[]): ItemsText {
  const text = JSON.stringify(items);
  // JSON.stringify hands back a tree of concatenations (~3 objects); a numeric conversion flattens
  // it into the one string that is kept.
  Number(text);
  return text as ItemsText;
}

/** Fresh objects on every read: a caller may change them without changing the record. */
export function itemsFromText(text: ItemsText): Item[] {
  return JSON.parse(text) as Item[];
}
