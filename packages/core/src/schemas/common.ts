import { z } from "zod";
import { CURRENCY_CODES } from "../money/currencies.js";
import { digitsAfterPoint, isDecimalString } from "../money/decimal.js";
import { ruleCheck } from "../validation/issues.js";

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** True for a GUID in the 8-4-4-4-12 hexadecimal form, any case. */
export function isGuid(value: string): boolean {
  return GUID.test(value);
}

/** A GUID (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`). */
export const guidSchema = z.string().refine(isGuid, ruleCheck("guid", "must be a GUID"));

/** An ISO 4217 currency code in upper case ("EUR"). */
export const currencyCodeSchema = z
  .string()
  .refine((code) => CURRENCY_CODES.has(code), ruleCheck("currency", "must be an ISO 4217 currency code"));

/**
 * A decimal number carried as a string ("12.50"), with at most `maxDecimals` fraction digits and
 * optional inclusive bounds.
 */
export function decimalStringSchema(options: { maxDecimals: number; min?: number; max?: number }) {
  const { maxDecimals, min, max } = options;
  const decimal = z
    .string()
    .refine(isDecimalString, { ...ruleCheck("decimal", "must be a decimal number"), abort: true })
    .refine(
      // The value is a decimal string here (the check above aborts): count after the point.
      (value) => digitsAfterPoint(value) <= maxDecimals,
      ruleCheck("decimals", `must have at most ${maxDecimals} decimals`),
    );
  const withMin =
    min === undefined
      ? decimal
      : decimal.refine((value) => Number(value) >= min, ruleCheck("min", `must be at least ${min}`));
  return max === undefined
    ? withMin
    : withMin.refine((value) => Number(value) <= max, ruleCheck("max", `must be at most ${max}`));
}

/** A whole number carried as a string ("3"), within inclusive bounds. */
export function integerStringSchema(options: { min: number; max: number }) {
  const { min, max } = options;
  return z
    .string()
    .refine((value) => /^-?\d+$/.test(value), {
      ...ruleCheck("integer", "must be a whole number"),
      abort: true,
    })
    .refine((value) => Number(value) >= min, ruleCheck("min", `must be at least ${min}`))
    .refine((value) => Number(value) <= max, ruleCheck("max", `must be at most ${max}`));
}

/**
 * The forms the service's own parser (.NET's TimeSpan) accepts: `d.hh:mm:ss` with any number of
 * days ("1.00:00:10", "100.00:00:00", the documented "01.00:30:00") and `hh:mm:ss` ("00:00:10").
 */
const TIMESPAN = /^(?:(\d{1,8})\.)?(\d{2}):(\d{2}):(\d{2})$/;
/** TimeSpan's largest whole number of days. */
const MAX_TIMESPAN_DAYS = 10_675_199;

/** Parses a timespan (`d.hh:mm:ss` or `hh:mm:ss`) into milliseconds, or undefined when invalid. */
export function parseTimespan(value: string): number | undefined {
  const match = TIMESPAN.exec(value);
  if (!match) return undefined;
  const days = match[1] === undefined ? 0 : Number(match[1]);
  const [hours, minutes, seconds] = match.slice(2).map(Number) as [number, number, number];
  if (days > MAX_TIMESPAN_DAYS || hours > 23 || minutes > 59 || seconds > 59) return undefined;
  return (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000;
}

/** A relative delay: `d.hh:mm:ss` with any number of days, or `hh:mm:ss` ("01.00:30:00", "00:00:10"). */
export const timespanSchema = z
  .string()
  .refine(
    (value) => parseTimespan(value) !== undefined,
    ruleCheck("timespan", "must be a timespan in the form d.hh:mm:ss or hh:mm:ss"),
  );

/**
 * At most `max` characters, counted as Unicode code points (an emoji is one), whatever zod's own
 * counting in the installed version: the one documented way this client counts lengths.
 */
export function maxCharacters(max: number) {
  return z
    .string()
    .refine(
      (value) => value.length <= max || [...value].length <= max,
      ruleCheck("max_length", `must be at most ${max} characters`),
    );
}

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})([+-])(\d{2}):(\d{2})$/;

/**
 * Parses `yyyy-MM-ddTHH:mm:ss±hh:mm` into epoch milliseconds, or undefined when it is not a real
 * calendar time with an offset of at most 14 hours.
 */
export function parseTimestamp(value: string): number | undefined {
  const match = TIMESTAMP.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[] as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetSign = match[7] === "-" ? -1 : 1;
  const offsetHours = Number(match[8]);
  const offsetMinutes = Number(match[9]);
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  if (offsetMinutes > 59 || offsetHours * 60 + offsetMinutes > 14 * 60) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return undefined;
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  return local - offsetSign * (offsetHours * 60 + offsetMinutes) * 60_000;
}

/** An absolute time in the form `yyyy-MM-ddTHH:mm:ss±hh:mm` ("2026-12-01T09:00:00+01:00"). */
export const timestampSchema = z
  .string()
  .refine(
    (value) => parseTimestamp(value) !== undefined,
    ruleCheck("timestamp", "must be a time in the form yyyy-MM-ddTHH:mm:ss±hh:mm"),
  );
