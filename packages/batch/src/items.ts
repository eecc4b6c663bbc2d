import { createHash } from "node:crypto";
import {
  type AuthorizationRequest,
  type AuthorizationRequestInput,
  checkAuthorizationRequest,
  formatScheduleTime,
} from "@purchase-auth/core";

// What one merchant-initiated charge is: the customer's stored token and the order the server
// built. Items carry no key: keys are derived from the batch, the item and the attempt.

/** The order of an item, exactly as core's `authorizations.create` takes it. */
export type ChargeOrder = AuthorizationRequestInput["order"];
/** When the service makes its attempts; see the specification, section 2.4. */
export type ChargeSchedule = NonNullable<AuthorizationRequestInput["attemptSchedule"]>;

/** One charge of a batch. */
export interface ChargeItem {
  /**
   * Stable id of this charge within its batch (e.g. "sub-1042-2026-12"): the same id in a re-run
   * is the same charge, never a second one. 1 to 200 characters.
   */
  itemId: string;
  /** The customer's stored token (a GUID). A bearer instrument: stored, never logged. */
  customerToken: string;
  /** The order the server built (items, currency, reference, ...). */
  order: ChargeOrder;
  /** Overrides `order.captureMode` (Auto or Manual). */
  captureMode?: "Auto" | "Manual";
  /**
   * The service's attempt schedule. Omitted: one synchronous attempt (`preferSynchronous`), so the
   * outcome is known at once; with a relative or absolute schedule the answer is 202 and the
   * outcome arrives by webhook (the item ends `accepted`).
   */
  attemptSchedule?: ChargeSchedule;
  /** Overrides the token's store id. */
  storeId?: string;
}

export const MAX_ITEM_ID_LENGTH = 200;

/** The wire request of an item, checked by core; or why it cannot be sent. */
export function requestOf(
  item: ChargeItem,
  defaultSchedule: ChargeSchedule,
): { request: AuthorizationRequest } | { invalid: string } {
  const input: AuthorizationRequestInput = {
    customerToken: item.customerToken,
    order: item.captureMode === undefined ? item.order : { ...item.order, captureMode: item.captureMode },
    attemptSchedule: item.attemptSchedule ?? defaultSchedule,
    ...(item.storeId === undefined ? {} : { storeId: item.storeId }),
  };
  const checked = checkAuthorizationRequest(input);
  if (checked.success) return { request: checked.request };
  const first = checked.issues.slice(0, 3).map((issue) => issue.message);
  const more = checked.issues.length > 3 ? `; and ${checked.issues.length - 3} more` : "";
  return { invalid: `${first.join("; ")}${more}` };
}

/** Throws a TypeError naming the problem when `value` is not a usable item (before anything is stored). */
export function assertChargeItem(value: unknown, position: number): asserts value is ChargeItem {
  const where = `item ${position}`;
  if (typeof value !== "object" || value === null) throw new TypeError(`${where} must be an object`);
  const item = value as Record<string, unknown>;
  if (
    typeof item.itemId !== "string" ||
    item.itemId.length === 0 ||
    item.itemId.length > MAX_ITEM_ID_LENGTH
  ) {
    throw new TypeError(`${where}: itemId must be a string of 1 to ${MAX_ITEM_ID_LENGTH} characters`);
  }
  if (typeof item.customerToken !== "string" || item.customerToken.length === 0) {
    throw new TypeError(`${where} (${item.itemId}): customerToken must be a non-empty string`);
  }
  if (typeof item.order !== "object" || item.order === null) {
    throw new TypeError(`${where} (${item.itemId}): order must be an object`);
  }
}

/**
 * The item as a store keeps it: `Date`s of `attemptSchedule.absolute` become the service's time
 * format (`yyyy-MM-ddTHH:mm:ss+00:00`, as core sends them). A JSON round trip (PostgreSQL's jsonb)
 * would turn them into ISO strings with milliseconds, which core refuses; converted before it, both
 * stores keep and fingerprint the same item. The same object when there is nothing to convert.
 */
export function storedItemOf(item: ChargeItem): ChargeItem {
  const absolute = item.attemptSchedule?.absolute;
  if (!Array.isArray(absolute) || !absolute.some((time) => time instanceof Date)) return item;
  const times = absolute.map((time) =>
    // An invalid Date stays invalid (as core does): registration stores the item rejected.
    time instanceof Date ? (Number.isNaN(time.getTime()) ? "Invalid Date" : formatScheduleTime(time)) : time,
  );
  return { ...item, attemptSchedule: { ...item.attemptSchedule, absolute: times } };
}

/** A stable digest of an item's content: the same charge registered twice has the same one. */
export function fingerprintOf(item: ChargeItem): string {
  return createHash("sha256").update(stableJson(item)).digest("base64url");
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
