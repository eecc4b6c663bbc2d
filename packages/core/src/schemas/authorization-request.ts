import { z } from "zod";
import { orderTotalCents } from "../money/order-total.js";
import { ruleCheck } from "../validation/issues.js";
import {
  currencyCodeSchema,
  decimalStringSchema,
  guidSchema,
  integerStringSchema,
  maxCharacters,
  timespanSchema,
  timestampSchema,
} from "./common.js";

/** Exported from here, where it always was: the schema below is its main user. */
export { orderTotalCents } from "../money/order-total.js";

// Wire schemas of the create-authorization call (specification sections 2.1 to 2.4 and 8). The
// sandbox validates requests with these same schemas, so client and service cannot drift apart.

/** Longest item description the service keeps; longer ones are cut, not rejected (section 2.3). */
export const DESCRIPTION_MAX_LENGTH = 50;

/**
 * Cuts to `max` characters, counted as code points like every other length limit (maxCharacters):
 * an emoji is one character, not two UTF-16 units.
 */
function truncate(value: string, max: number): string {
  if (value.length <= max) return value;
  const characters = [...value];
  return characters.length <= max ? value : characters.slice(0, max).join("");
}

/** A required text field: trimmed, then non-empty. */
const requiredText = () => z.string().trim().min(1);

export const captureModeSchema = z.enum(["Auto", "Manual"]);

export const itemSchema = z.object({
  id: requiredText().pipe(maxCharacters(50)),
  description: requiredText().transform((value) => truncate(value, DESCRIPTION_MAX_LENGTH)),
  unitPrice: decimalStringSchema({ maxDecimals: 2 }),
  quantity: integerStringSchema({ min: 1, max: 99_999_999 }),
  vat: decimalStringSchema({ maxDecimals: 2, min: 0, max: 100 }),
});

export const orderRequestSchema = z
  .object({
    items: z.array(itemSchema).min(1),
    currency: currencyCodeSchema,
    reference: maxCharacters(50).optional(),
    actionReference: maxCharacters(255).optional(),
    settlementReference: maxCharacters(50).optional(),
    captureMode: captureModeSchema.optional(),
  })
  .superRefine(
    (order, ctx) => {
      // Our assumption, not the specification's: a charge must be for more than nothing.
      const total = orderTotalCents(order.items);
      if (total !== undefined && total <= 0n) {
        ctx.addIssue({
          code: "custom",
          path: ["items"],
          ...ruleCheck("positive_total", "must add up to more than 0"),
        });
      }
    },
    // Only a total of valid items means anything.
    { when: (payload) => payload.issues.length === 0 },
  );

const SCHEDULE_FIELDS = ["relative", "absolute", "preferSynchronous"] as const;

export const attemptScheduleSchema = z
  .object({
    // Empty lists are allowed: "an empty or omitted schedule means a single asynchronous attempt".
    relative: z.array(timespanSchema).optional(),
    absolute: z.array(timestampSchema).optional(),
    preferSynchronous: z.boolean().optional(),
  })
  .superRefine((schedule, ctx) => {
    // Counted before the names are listed: every create call runs this, nearly always with one.
    const given =
      Number(schedule.relative !== undefined) +
      Number(schedule.absolute !== undefined) +
      Number(schedule.preferSynchronous !== undefined);
    if (given > 1) {
      const set = SCHEDULE_FIELDS.filter((key) => schedule[key] !== undefined);
      ctx.addIssue({
        code: "custom",
        path: [],
        ...ruleCheck(
          "one_schedule",
          `may set only one of relative, absolute, preferSynchronous (got ${set.join(", ")})`,
        ),
      });
    }
  });

export const authorizationRequestSchema = z.object({
  customerToken: guidSchema,
  storeId: requiredText().optional(),
  order: orderRequestSchema,
  attemptSchedule: attemptScheduleSchema.optional(),
});

/** The create-authorization body as it goes on the wire (after trimming and truncation). */
export type AuthorizationRequest = z.output<typeof authorizationRequestSchema>;
export type OrderRequest = z.output<typeof orderRequestSchema>;
export type Item = z.output<typeof itemSchema>;
export type AttemptSchedule = z.output<typeof attemptScheduleSchema>;
export type CaptureMode = z.output<typeof captureModeSchema>;
