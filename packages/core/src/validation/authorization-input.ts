import { ValidationError } from "../errors/errors.js";
import { decimalStringOf, fractionDigits } from "../money/decimal.js";
import {
  type AuthorizationRequest,
  authorizationRequestSchema,
  type CaptureMode,
} from "../schemas/authorization-request.js";
import { FALL_BACK, type FastParser, fastParserOf } from "./compiled-parser.js";
import { checkWith, type ValidationIssue } from "./issues.js";

/** An item as callers may write it: amounts as numbers or decimal strings. */
export interface ItemInput {
  /** Article id, at most 50 characters after trimming. */
  id: string;
  /** Shown on the receipt; trimmed, and cut to 50 characters as the service does. */
  description: string;
  /** Unit price including VAT, at most 2 decimals ("12.50" or 12.5). Negative for discounts. */
  unitPrice: string | number;
  /** 1 to 99,999,999. */
  quantity: string | number;
  /** VAT in percent, 0 to 100, at most 2 decimals. */
  vat: string | number;
}

export interface OrderInput {
  items: ItemInput[];
  /** ISO 4217 code; must match the customer token's currency. Lower case is accepted. */
  currency: string;
  /** Your order reference, at most 50 characters. */
  reference?: string;
  /** Reference of this action, shown on the settlement report; at most 255 characters. */
  actionReference?: string;
  /** Groups settlement reports; at most 50 characters. */
  settlementReference?: string;
  /** Auto captures at once; Manual waits for `orders.capture`. Omitted: the token's mode. */
  captureMode?: CaptureMode;
}

export interface AttemptScheduleInput {
  /** Delays between attempts, each `dd.HH:mm:ss` after the previous one. */
  relative?: string[];
  /** Attempt times, `yyyy-MM-ddTHH:mm:ss±hh:mm`; Date objects are converted (UTC). */
  absolute?: Array<string | Date>;
  /** One synchronous attempt unless the customer must complete a challenge. */
  preferSynchronous?: boolean;
}

export interface AuthorizationRequestInput {
  /** The customer token (a GUID) from the customer's first checkout. */
  customerToken: string;
  /** Omitted: the store id held in the customer token. */
  storeId?: string;
  order: OrderInput;
  /** Omitted or empty: one asynchronous attempt as soon as possible. At most one field. */
  attemptSchedule?: AttemptScheduleInput;
}

const ASCII_LOWER_CASE = /[a-z]/;

function asciiUpperCase(value: string): string {
  if (!ASCII_LOWER_CASE.test(value)) return value;
  return value.replace(/[a-z]/g, (letter) => String.fromCharCode(letter.charCodeAt(0) - 32));
}

/** `Date` → `yyyy-MM-ddTHH:mm:ss+00:00` (the service's absolute time format has no milliseconds). */
export function formatScheduleTime(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`;
}

/** A number or decimal string → decimal string; anything else is left for the schema to reject. */
function decimalOrAsIs(value: unknown): unknown {
  return typeof value === "number" || typeof value === "bigint" ? (decimalStringOf(value) ?? value) : value;
}

/** Prices go on the wire with exactly 2 decimals ("12.5" → "12.50"); never rounded. */
function priceOrAsIs(value: unknown): unknown {
  const text = decimalOrAsIs(value);
  if (typeof text !== "string") return text;
  // Already two decimals (or not a number at all, which stays as it is for the schema to name).
  if (text.length >= 4 && text[text.length - 3] === ".") return text;
  const decimals = decimalStringOf(text) === undefined ? Number.NaN : fractionDigits(text);
  if (decimals === 0) return `${text}.00`;
  if (decimals === 1) return `${text}0`;
  return text;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** `item` with its amounts in wire form; the same object when they already are. */
function itemInWireShape(item: unknown): unknown {
  const fields = record(item);
  if (!fields) return item;
  const unitPrice = priceOrAsIs(fields.unitPrice);
  const quantity = decimalOrAsIs(fields.quantity);
  const vat = decimalOrAsIs(fields.vat);
  if (unitPrice === fields.unitPrice && quantity === fields.quantity && vat === fields.vat) return item;
  return { ...fields, unitPrice, quantity, vat };
}

/** The items in wire form; the same array when every item already is (no array per call). */
function itemsInWireShape(items: readonly unknown[]): readonly unknown[] {
  let converted: unknown[] | undefined;
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const wire = itemInWireShape(item);
    if (wire !== item) converted ??= items.slice(0, index);
    converted?.push(wire);
  }
  return converted ?? items;
}

/** The schedule's absolute times as strings: Dates formatted, everything else as is. */
function absoluteInWireShape(absolute: unknown): unknown {
  if (!Array.isArray(absolute) || !absolute.some((time) => time instanceof Date)) return absolute;
  return absolute.map((time) =>
    // An invalid Date stays an invalid value, for the schema to name (toISOString would throw).
    time instanceof Date ? (Number.isNaN(time.getTime()) ? "Invalid Date" : formatScheduleTime(time)) : time,
  );
}

/**
 * Turns friendly input into the wire shape without judging it: numbers become exact decimal
 * strings, currency codes upper case, Dates schedule strings. Wrong types pass through unchanged so
 * the wire schema reports them with the field's path. Objects are copied only where something
 * changes (input already in wire form comes back as it is: the common case costs no copy).
 */
export function toWireShape(input: unknown): unknown {
  const request = record(input);
  const order = record(request?.order);
  if (!request || !order) return input;
  const items = Array.isArray(order.items) ? itemsInWireShape(order.items) : order.items;
  // ASCII letters only: "ıNR".toUpperCase() is "INR", and a dotless ı must not become a currency.
  const currency = typeof order.currency === "string" ? asciiUpperCase(order.currency) : order.currency;
  const schedule = record(request.attemptSchedule);
  const absolute = absoluteInWireShape(schedule?.absolute);
  const orderChanged = items !== order.items || currency !== order.currency;
  const scheduleChanged = schedule !== undefined && absolute !== schedule.absolute;
  if (!orderChanged && !scheduleChanged) return input;
  return {
    ...request,
    ...(orderChanged ? { order: { ...order, items, currency } } : {}),
    ...(scheduleChanged ? { attemptSchedule: { ...schedule, absolute } } : {}),
  };
}

export type AuthorizationValidationResult =
  | { success: true; request: AuthorizationRequest }
  | { success: false; issues: ValidationIssue[] };

/** The fast paths for valid requests, compiled from the schema on first use: frozen, and not. */
let parseFrozenRequest: FastParser | undefined;
let parseRequest: FastParser | undefined;

/** Requests this module has checked; they are frozen, so they cannot have changed since. */
const checkedRequests = new WeakSet<object>();

/** True when `value` came from a successful check here (so `create` need not check it again). */
export function isCheckedAuthorizationRequest(value: unknown): value is AuthorizationRequest {
  return typeof value === "object" && value !== null && checkedRequests.has(value);
}

/**
 * Checks a create-authorization request against every rule of specification sections 2 and 8.
 * A valid request comes back in wire form and frozen.
 */
export function checkAuthorizationRequest(input: unknown): AuthorizationValidationResult {
  if (isCheckedAuthorizationRequest(input)) return { success: true, request: input };
  const result = inWireFormChecked(input, true);
  if (result.success) checkedRequests.add(result.request);
  return result;
}

/**
 * The request in wire form, checked: by the fast path compiled from the schema, or, when that is
 * not sure, by zod itself (which names every broken rule); frozen all through when asked.
 */
function inWireFormChecked(input: unknown, freeze: boolean): AuthorizationValidationResult {
  const wire = toWireShape(input);
  const fast = fastParser(freeze)(wire);
  if (fast !== FALL_BACK) return { success: true, request: fast as AuthorizationRequest };
  const result = checkWith(authorizationRequestSchema, wire);
  if (!result.success) return result;
  const request = result.data as AuthorizationRequest;
  return { success: true, request: freeze ? deepFreeze(request) : request };
}

function fastParser(freeze: boolean): FastParser {
  if (freeze) {
    parseFrozenRequest ??= fastParserOf(authorizationRequestSchema, { freeze: true });
    return parseFrozenRequest;
  }
  parseRequest ??= fastParserOf(authorizationRequestSchema, { freeze: false });
  return parseRequest;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Like `checkAuthorizationRequest`, but throws a `ValidationError` naming every broken rule. The
 * request comes back in wire form, neither frozen nor remembered as checked: `create` only sends
 * it, and freezing and remembering cost a third of the check. (A request `checkAuthorizationRequest`
 * returned comes back as it is.)
 */
export function validateAuthorizationRequest(
  input: AuthorizationRequestInput | AuthorizationRequest,
): AuthorizationRequest {
  if (isCheckedAuthorizationRequest(input)) return input;
  const result = inWireFormChecked(input, false);
  if (!result.success) throw new ValidationError(result.issues);
  return result.request;
}
