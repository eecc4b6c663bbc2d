import { type AuthorizationRequest, CURRENCY_CODES } from "@purchase-auth/core";

// A straightforward imperative validator for the rules core checks (specification sections 2 and
// 8, plus core's positive total), written by hand as the speed reference for core's zod schemas.
// Wire form only (amounts as strings). Only the benchmark uses it.

type Json = Record<string, unknown>;

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DECIMAL = /^-?\d+(?:\.(\d+))?$/;
const INTEGER = /^-?\d+$/;
const TIMESPAN = /^\d{2}\.(\d{2}):(\d{2}):(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})[+-](\d{2}):(\d{2})$/;
const CAPTURE_MODES = new Set(["Auto", "Manual"]);

export class ReferenceValidationError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid request: ${issues.join("; ")}`);
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Returns the wire body core would send, or throws with every broken rule. */
export function referenceValidate(input: unknown): AuthorizationRequest {
  const issues: string[] = [];
  if (!isObject(input)) throw new ReferenceValidationError(["(request) type"]);

  const customerToken = input.customerToken;
  if (typeof customerToken !== "string" || !GUID.test(customerToken)) issues.push("customerToken");

  let storeId: string | undefined;
  if (input.storeId !== undefined) {
    if (typeof input.storeId !== "string" || input.storeId.trim() === "") issues.push("storeId");
    else storeId = input.storeId.trim();
  }

  const order = input.order;
  let wireOrder: AuthorizationRequest["order"] | undefined;
  if (!isObject(order)) issues.push("order");
  else wireOrder = checkOrder(order, issues);

  let schedule: AuthorizationRequest["attemptSchedule"];
  if (input.attemptSchedule !== undefined) {
    if (!isObject(input.attemptSchedule)) issues.push("attemptSchedule");
    else schedule = checkSchedule(input.attemptSchedule, issues);
  }

  if (issues.length > 0 || wireOrder === undefined) throw new ReferenceValidationError(issues);
  // Key order as core emits it, so both serialise to the same bytes.
  return {
    customerToken: customerToken as string,
    ...(storeId === undefined ? {} : { storeId }),
    order: wireOrder,
    ...(schedule === undefined ? {} : { attemptSchedule: schedule }),
  };
}

function checkOrder(order: Json, issues: string[]): AuthorizationRequest["order"] | undefined {
  const before = issues.length;
  const items: AuthorizationRequest["order"]["items"] = [];
  let totalCents = 0n;
  if (!Array.isArray(order.items) || order.items.length === 0) issues.push("order.items");
  else {
    for (let index = 0; index < order.items.length; index++) {
      const item: unknown = order.items[index];
      const path = `order.items[${index}]`;
      if (!isObject(item)) {
        issues.push(path);
        continue;
      }
      const id = typeof item.id === "string" ? item.id.trim() : undefined;
      if (id === undefined || id.length === 0 || !atMost(id, 50)) issues.push(`${path}.id`);
      const description = typeof item.description === "string" ? item.description.trim() : undefined;
      if (description === undefined || description.length === 0) issues.push(`${path}.description`);
      const { unitPrice, quantity, vat } = item;
      const priceDecimals = typeof unitPrice === "string" ? decimals(unitPrice) : -1;
      if (priceDecimals < 0 || priceDecimals > 2) issues.push(`${path}.unitPrice`);
      const quantityOk =
        typeof quantity === "string" &&
        INTEGER.test(quantity) &&
        Number(quantity) >= 1 &&
        Number(quantity) <= 99_999_999;
      if (!quantityOk) issues.push(`${path}.quantity`);
      const vatDecimals = typeof vat === "string" ? decimals(vat) : -1;
      if (vatDecimals < 0 || vatDecimals > 2 || Number(vat) < 0 || Number(vat) > 100)
        issues.push(`${path}.vat`);
      if (issues.length > before) continue;
      totalCents += cents(unitPrice as string) * BigInt(quantity as string);
      items.push({
        id: id!,
        description: truncate(description!, 50),
        unitPrice: unitPrice as string,
        quantity: quantity as string,
        vat: vat as string,
      });
    }
  }
  const { currency, reference, actionReference, settlementReference, captureMode } = order;
  if (typeof currency !== "string" || !CURRENCY_CODES.has(currency)) issues.push("order.currency");
  if (!optionalText(reference, 50)) issues.push("order.reference");
  if (!optionalText(actionReference, 255)) issues.push("order.actionReference");
  if (!optionalText(settlementReference, 50)) issues.push("order.settlementReference");
  if (captureMode !== undefined && !CAPTURE_MODES.has(captureMode as string))
    issues.push("order.captureMode");
  if (issues.length > before) return undefined;
  if (totalCents <= 0n) {
    issues.push("order.items positive_total");
    return undefined;
  }
  return {
    items,
    currency: currency as string,
    ...(reference === undefined ? {} : { reference: reference as string }),
    ...(actionReference === undefined ? {} : { actionReference: actionReference as string }),
    ...(settlementReference === undefined ? {} : { settlementReference: settlementReference as string }),
    ...(captureMode === undefined ? {} : { captureMode: captureMode as "Auto" | "Manual" }),
  };
}

function checkSchedule(schedule: Json, issues: string[]): AuthorizationRequest["attemptSchedule"] {
  const { relative, absolute, preferSynchronous } = schedule;
  let set = 0;
  if (relative !== undefined) {
    set++;
    if (!Array.isArray(relative) || relative.length === 0 || !relative.every(isTimespan)) {
      issues.push("attemptSchedule.relative");
    }
  }
  if (absolute !== undefined) {
    set++;
    if (!Array.isArray(absolute) || absolute.length === 0 || !absolute.every(isTimestamp)) {
      issues.push("attemptSchedule.absolute");
    }
  }
  if (preferSynchronous !== undefined) {
    set++;
    if (typeof preferSynchronous !== "boolean") issues.push("attemptSchedule.preferSynchronous");
  }
  if (set > 1) issues.push("attemptSchedule one_schedule");
  return {
    ...(relative === undefined ? {} : { relative: relative as string[] }),
    ...(absolute === undefined ? {} : { absolute: absolute as string[] }),
    ...(preferSynchronous === undefined ? {} : { preferSynchronous: preferSynchronous as boolean }),
  };
}

/** Fraction digits of a decimal string, or -1 when it is not one. */
function decimals(value: string): number {
  const match = DECIMAL.exec(value);
  return match === null ? -1 : (match[1]?.length ?? 0);
}

function cents(amount: string): bigint {
  const negative = amount.startsWith("-");
  const [whole = "0", fraction = ""] = (negative ? amount.slice(1) : amount).split(".");
  const magnitude = BigInt(whole + fraction.padEnd(2, "0"));
  return negative ? -magnitude : magnitude;
}

function optionalText(value: unknown, max: number): boolean {
  return value === undefined || (typeof value === "string" && atMost(value, max));
}

/** The UTF-16 length of `value`'s first `max` characters, counted as code points as the service does. */
function unitsOf(value: string, max: number): number {
  let end = 0;
  for (let characters = 0; characters < max && end < value.length; characters++) {
    const unit = value.charCodeAt(end);
    const next = value.charCodeAt(end + 1);
    end += unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return end;
}

/** At most `max` characters (code points). */
function atMost(value: string, max: number): boolean {
  return value.length <= max || unitsOf(value, max) === value.length;
}

/** Cuts to `max` characters (code points). */
function truncate(value: string, max: number): string {
  return value.length <= max ? value : value.slice(0, unitsOf(value, max));
}

function isTimespan(value: unknown): boolean {
  if (typeof value !== "string") return false;
  const match = TIMESPAN.exec(value);
  return match !== null && Number(match[1]) <= 23 && Number(match[2]) <= 59 && Number(match[3]) <= 59;
}

function isTimestamp(value: unknown): boolean {
  if (typeof value !== "string") return false;
  const match = TIMESTAMP.exec(value);
  if (match === null) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match
    .slice(1)
    .map(Number) as number[];
  if (month! < 1 || month! > 12 || hour! > 23 || minute! > 59 || second! > 59) return false;
  if (offsetMinutes! > 59 || offsetHours! * 60 + offsetMinutes! > 14 * 60) return false;
  return day! >= 1 && day! <= new Date(Date.UTC(year!, month!, 0)).getUTCDate();
}
