import type { z } from "zod";
import { safeParseFast } from "./compiled-parser.js";

/**
 * The rules a request can break. The client and the sandbox report the same rule for the same
 * problem, so a failure found locally reads exactly like the one the service would have returned.
 */
export type ValidationRule =
  | "required"
  | "type"
  | "guid"
  | "currency"
  | "decimal"
  | "decimals"
  | "integer"
  | "min"
  | "max"
  | "min_length"
  | "max_length"
  | "min_items"
  | "enum"
  | "timespan"
  | "timestamp"
  | "one_schedule"
  | "positive_total";

/** One problem with a request: where it is (`order.items[0].vat`), which rule, and what to do. */
export interface ValidationIssue {
  /** Field path in dotted form with array indexes: `order.items[0].unitPrice`. */
  readonly path: string;
  readonly rule: ValidationRule;
  /** A sentence that starts with the path, e.g. "order.items[0].vat must be at most 100". */
  readonly message: string;
}

/** `["order", "items", 0, "vat"]` → `order.items[0].vat`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(request)" : out;
}

/** Parameters our own refinements attach to a custom zod issue. */
export interface RuleParams {
  rule: ValidationRule;
}

/** Options for a zod refinement that reports `rule` with the sentence `text` after the path. */
export function ruleCheck(rule: ValidationRule, text: string): { message: string; params: RuleParams } {
  return { message: text, params: { rule } };
}

/**
 * Maps zod's issues to ours: every message names the field and the rule. Pass the parsed `input`
 * so a missing field ("required") is told apart from one of the wrong type ("type").
 */
export function toValidationIssues(error: z.ZodError, input: unknown): ValidationIssue[] {
  return error.issues.map((issue) => {
    const path = formatPath(issue.path);
    const { rule, text } = describe(issue, valueAt(input, issue.path));
    return { path, rule, message: `${path} ${text}` };
  });
}

/**
 * Checks `input` with `schema`: the parsed value, or every issue with its path and rule. Valid input
 * takes the fast path compiled from the same schema; zod itself names the issues.
 */
export function checkWith<T extends z.ZodType>(
  schema: T,
  input: unknown,
): { success: true; data: z.output<T> } | { success: false; issues: ValidationIssue[] } {
  const parsed = safeParseFast(schema, input);
  return parsed.success
    ? { success: true, data: parsed.data }
    : { success: false, issues: toValidationIssues(parsed.error, input) };
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describe(issue: z.core.$ZodIssue, received: unknown): { rule: ValidationRule; text: string } {
  switch (issue.code) {
    case "custom": {
      const rule = (issue.params as RuleParams | undefined)?.rule ?? "type";
      return { rule, text: issue.message };
    }
    case "invalid_type":
      if (received === undefined) return { rule: "required", text: "is required" };
      if (issue.expected === "int") return { rule: "integer", text: "must be a whole number" };
      return { rule: "type", text: `must be ${article(issue.expected)}` };
    case "too_small":
      if (issue.origin === "string") {
        return { rule: "min_length", text: `must be at least ${issue.minimum} characters long` };
      }
      if (issue.origin === "array") {
        return {
          rule: "min_items",
          text: `must have at least ${issue.minimum} item${plural(issue.minimum)}`,
        };
      }
      return { rule: "min", text: `must be at least ${issue.minimum}` };
    case "too_big":
      if (issue.origin === "string") {
        return { rule: "max_length", text: `must be at most ${issue.maximum} characters long` };
      }
      return { rule: "max", text: `must be at most ${issue.maximum}` };
    case "invalid_value":
      return { rule: "enum", text: `must be one of ${issue.values.map(String).join(", ")}` };
    case "invalid_union":
      return { rule: "type", text: "has an unsupported type" };
    default:
      return { rule: "type", text: issue.message };
  }
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function plural(count: number | bigint): string {
  return Number(count) === 1 ? "" : "s";
}
