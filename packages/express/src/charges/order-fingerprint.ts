import { hash } from "node:crypto";
import type { AuthorizationRequest } from "@purchase-auth/core";

/**
 * A hash of what the create call charges: amount, currency, capture mode, store and the items
 * (as checked by core), with object keys sorted so that equal orders hash equally. Stored on the
 * charge: its value must never change for the same order (a repeated POST compares it).
 */
export function orderFingerprint(request: AuthorizationRequest, amount: string): string {
  const { order } = request;
  const fields: Record<string, unknown> = {
    amount,
    captureMode: order.captureMode ?? null,
    currency: order.currency,
    items: order.items,
    storeId: request.storeId ?? null,
  };
  // One-shot: a Hash object per charge costs twice as much.
  const json = isPlainOrder(fields)
    ? JSON.stringify(fields, SORTED_KEYS)
    : objectJson(fields, FINGERPRINT_SHAPE);
  return hash("sha256", json, "hex");
}

const isEnumerable = Object.prototype.propertyIsEnumerable;
const FIELD_KEYS: readonly string[] = ["amount", "captureMode", "currency", "items", "storeId"];
const ITEM_KEYS: readonly string[] = ["description", "id", "quantity", "unitPrice", "vat"];

/**
 * Every key of a plain order, sorted: given as JSON.stringify's property list, it writes every
 * object's keys in this order, which is `canonicalJson` for such an order in one string (the
 * concatenations cost ~1 KiB per charge).
 */
const SORTED_KEYS = [...FIELD_KEYS, ...ITEM_KEYS].sort();

/**
 * True for the orders core's checks produce: string (or null) fields, items of plain objects whose
 * own keys are item keys with string values, and no key of the list inherited (else the property
 * list would read it).
 */
function isPlainOrder(fields: Record<string, unknown>): boolean {
  for (let index = 0; index < SORTED_KEYS.length; index++) {
    if (SORTED_KEYS[index]! in Object.prototype) return false;
  }
  // JSON.stringify calls a toJSON the canonical builder never calls (a library may add one).
  if ("toJSON" in Object.prototype || "toJSON" in Array.prototype) return false;
  const { items } = fields;
  if (!Array.isArray(items) || Object.getPrototypeOf(items) !== Array.prototype) return false;
  if (Object.hasOwn(items, "toJSON")) return false;
  for (let index = 0; index < items.length; index++) {
    const item: unknown = items[index];
    if (typeof item !== "object" || item === null || Object.getPrototypeOf(item) !== Object.prototype) {
      return false;
    }
    // Own keys, enumerable or not: the property list reads a non-enumerable one, the builder not.
    for (const key of Object.getOwnPropertyNames(item)) {
      if (
        !ITEM_KEYS.includes(key) ||
        !isEnumerable.call(item, key) ||
        typeof (item as Record<string, unknown>)[key] !== "string"
      )
        return false;
    }
  }
  return (
    typeof fields.amount === "string" &&
    typeof fields.currency === "string" &&
    (fields.captureMode === null || typeof fields.captureMode === "string") &&
    (fields.storeId === null || typeof fields.storeId === "string")
  );
}

/**
 * JSON with every object's keys in code-unit order and undefined entries left out. Loops and
 * string concatenation: entries/filter/map/join allocated arrays that cost more than the hash.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ",";
      out += canonicalJson(value[index]);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  return objectJson(record, shapeOf(Object.keys(record)));
}

function objectJson(record: Record<string, unknown>, shape: Shape): string {
  let out = "{";
  for (let index = 0; index < shape.sorted.length; index++) {
    const entry = record[shape.sorted[index]!];
    if (entry === undefined) continue;
    if (out.length > 1) out += ",";
    out += shape.prefixes[index]! + canonicalJson(entry);
  }
  return `${out}}`;
}

interface Shape {
  /** Keys in the order `Object.keys` gave them. */
  keys: readonly string[];
  /** The same keys sorted by UTF-16 code units (the default sort compares as `a < b` does). */
  sorted: readonly string[];
  /** `"key":` of each sorted key. */
  prefixes: readonly string[];
}

function newShape(keys: readonly string[]): Shape {
  const sorted = [...keys].sort();
  return { keys, sorted, prefixes: sorted.map((key) => `${JSON.stringify(key)}:`) };
}

const FINGERPRINT_SHAPE = newShape(FIELD_KEYS);

/** The last object shape met: an order's items share one, so sorting their keys once is enough. */
let lastShape = newShape([]);

function shapeOf(keys: readonly string[]): Shape {
  const last = lastShape;
  if (keys.length !== last.keys.length || keys.some((key, index) => key !== last.keys[index])) {
    lastShape = newShape(keys);
  }
  return lastShape;
}
