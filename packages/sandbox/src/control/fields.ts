import { isGuid } from "@purchase-auth/core";
import { SandboxControlError } from "./errors.js";
import { LIMITS } from "./limits.js";

// Readers of single control input fields. Each names the field in its error, and bounds what it
// accepts (lengths, list sizes, numeric ranges): see limits.ts.

export type Fields = Record<string, unknown>;

export function invalid(field: string | undefined, message: string): never {
  throw new SandboxControlError(400, message, field);
}

/** The input as an object; with `known`, a field outside it is an error (most likely a typo). */
export function fields(value: unknown, known?: readonly string[], name?: string): Fields {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    invalid(name, `${name ?? "the input"} must be an object`);
  }
  const unknown = known && Object.keys(value).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    const field = name === undefined ? unknown : `${name}.${unknown}`;
    invalid(field, `unknown field ${field} (known: ${known?.join(", ")})`);
  }
  return value as Fields;
}

export function optionalString(
  input: Fields,
  key: string,
  maxLength: number = LIMITS.textLength,
  field = key,
): string | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.trim() === "") invalid(field, `${field} must be a non-empty string`);
  if (value.length > maxLength) invalid(field, `${field} must be at most ${maxLength} characters`);
  return value;
}

export function requiredString(input: Fields, key: string): string {
  return optionalString(input, key) ?? invalid(key, `${key} is required`);
}

export function optionalGuid(input: Fields, key: string): string | undefined {
  const value = optionalString(input, key);
  if (value !== undefined && !isGuid(value)) invalid(key, `${key} must be a GUID`);
  return value?.toLowerCase();
}

export function optionalBoolean(input: Fields, key: string, field = key): boolean | undefined {
  const value = input[key];
  if (value !== undefined && typeof value !== "boolean") invalid(field, `${field} must be true or false`);
  return value;
}

export function optionalOneOf<T extends string | number>(
  input: Fields,
  key: string,
  values: readonly T[],
): T | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (!(values as readonly unknown[]).includes(value))
    invalid(key, `${key} must be one of ${values.join(", ")}`);
  return value as T;
}

export function stringList(
  input: Fields,
  key: string,
  limits: { maxItems: number; maxLength: number },
): string[] | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) invalid(key, `${key} must be a list of non-empty strings`);
  if (value.length > limits.maxItems) invalid(key, `${key} must have at most ${limits.maxItems} entries`);
  value.forEach((item, index) => {
    if (typeof item !== "string" || item.trim() === "") {
      invalid(`${key}[${index}]`, `${key}[${index}] must be a non-empty string`);
    }
    if (item.length > limits.maxLength) {
      invalid(`${key}[${index}]`, `${key}[${index}] must be at most ${limits.maxLength} characters`);
    }
  });
  return [...(value as string[])];
}

/** A finite number within [min, max]; `integer` also requires a whole number. */
export function optionalNumber(
  input: Fields,
  key: string,
  range: { min: number; max: number; integer?: boolean; unit?: string },
): number | undefined {
  const value = input[key];
  if (value === undefined) return undefined;
  const { min, max, integer = false, unit = "" } = range;
  const ok =
    typeof value === "number" &&
    Number.isFinite(value) &&
    value >= min &&
    value <= max &&
    (!integer || Number.isInteger(value));
  if (!ok) {
    const what = integer ? "a whole number" : "a number";
    invalid(key, `${key} must be ${what}${unit} from ${min} to ${max}`);
  }
  return value;
}
