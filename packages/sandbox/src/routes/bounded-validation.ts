import {
  authorizationRequestSchema,
  itemSchema,
  safeParseFast,
  timespanSchema,
  timestampSchema,
} from "@purchase-auth/core";
import { MAX_VALIDATION_ENTRIES } from "./validation.js";

// Validation whose cost is bounded by the limits, not by the input. A 1 MiB body can hold ~350,000
// empty items; zod reports every broken rule of every one (1.75 million issues, 1.5 GB, 4 s) before
// the answer is cut to 100 entries. Here the long arrays are walked one element at a time and cut
// right after the element that brings their issues to 100; then core's schema checks the shortened
// body. zod reports issues in document order (the fields before an array, its elements in order, the
// fields after it), so the first 100 issues of the shortened body are exactly the first 100 of the
// whole: the answer is the same, only cheaper.

/** Arrays no longer than this are left to zod as they are (every normal request). */
const WALK_LONGER_THAN = MAX_VALIDATION_ENTRIES;

type Schema = { safeParse(value: unknown): { success: boolean; error?: { issues: readonly unknown[] } } };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * How many leading elements of `array` carry at least `budget` issues of `element` (all of them when
 * fewer). Each element is checked on its own, so memory stays that of one element's issues.
 */
function prefixWithIssues(array: readonly unknown[], element: Schema, budget: number): number {
  let issues = 0;
  for (let index = 0; index < array.length; index++) {
    issues += element.safeParse(array[index]).error?.issues.length ?? 0;
    if (issues >= budget) return index + 1;
  }
  return array.length;
}

/** `array` cut after the prefix that holds `budget` issues; undefined when it can stay as it is. */
function shortened(value: unknown, element: Schema, budget: number): unknown[] | undefined {
  if (!Array.isArray(value) || value.length <= WALK_LONGER_THAN) return undefined;
  const keep = prefixWithIssues(value, element, budget);
  return keep < value.length ? value.slice(0, keep) : undefined;
}

/**
 * The body to hand to `authorizationRequestSchema`: the body itself, or a copy whose long arrays
 * (order.items, attemptSchedule.relative/absolute) end right after the element that makes 100 issues.
 * A body that is valid is never shortened (an array is only cut where it has issues).
 */
export function boundedForValidation(body: unknown): unknown {
  if (!isRecord(body)) return body;
  const order = isRecord(body.order) ? body.order : undefined;
  const schedule = isRecord(body.attemptSchedule) ? body.attemptSchedule : undefined;
  const items = shortened(order?.items, itemSchema, MAX_VALIDATION_ENTRIES);
  // With 100 issues among the items, nothing after them can be among the first 100.
  const budget = items === undefined ? MAX_VALIDATION_ENTRIES : 1;
  const relative = shortened(schedule?.relative, timespanSchema, budget);
  const absolute = shortened(schedule?.absolute, timestampSchema, budget);
  if (items === undefined && relative === undefined && absolute === undefined) return body;
  return {
    ...body,
    ...(items === undefined ? {} : { order: { ...order, items } }),
    ...(relative === undefined && absolute === undefined
      ? {}
      : {
          attemptSchedule: {
            ...schedule,
            ...(relative === undefined ? {} : { relative }),
            ...(absolute === undefined ? {} : { absolute }),
          },
        }),
  };
}

const issueCount = (schema: Schema) => (value: unknown) => schema.safeParse(value).error?.issues.length ?? 0;

/** The arrays of the create body that core's schema walks element by element, for `parseBoundedJson`. */
export const AUTHORIZATION_WALKED_ARRAYS: ReadonlyMap<string, (value: unknown) => number> = new Map([
  [".order.items", issueCount(itemSchema)],
  [".attemptSchedule.relative", issueCount(timespanSchema)],
  [".attemptSchedule.absolute", issueCount(timestampSchema)],
]);

/** core's schema over the bounded body; issues (if any) refer to the body as sent. */
export function parseAuthorizationRequest(body: unknown) {
  const checked = boundedForValidation(body);
  // Valid bodies take core's compiled fast path; zod names the issues of the others.
  return { checked, result: safeParseFast(authorizationRequestSchema, checked) };
}
