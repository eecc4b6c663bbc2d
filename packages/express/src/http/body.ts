import { checkWith, type ValidationIssue } from "@purchase-auth/core";
import type { Request } from "express";
import type { z } from "zod";
import { problem } from "../problems.js";

/**
 * The JSON body of a request, checked with `schema`. Fields the schema does not know are refused by
 * name (the browser may not send a price or a token, not even to have it ignored). An empty body
 * reads as {}. The router's `jsonWriteEntry` has already refused anything but
 * application/json, empty bodies included.
 */
export function readJsonBody<T extends z.ZodType>(
  req: Request,
  schema: T,
  allowed: readonly string[],
): z.output<T> {
  const body: unknown = req.body ?? {};
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidBody([{ field: "(body)", message: "The request body must be a JSON object." }]);
  }
  const unknownFields = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknownFields.length > 0) {
    throw invalidBody(unknownFields.map((field) => ({ field, message: `${field} is not accepted here` })));
  }
  const result = checkWith(schema, body);
  if (!result.success) throw invalidBody(result.issues.map(fieldError));
  return result.data;
}

function fieldError(issue: ValidationIssue) {
  return { field: issue.path, message: issue.message };
}

function invalidBody(errors: Array<{ field: string; message: string }>) {
  return problem(
    "invalid-body",
    400,
    "Invalid request body",
    errors.map((entry) => entry.message).join("; "),
    {
      errors,
    },
  );
}
