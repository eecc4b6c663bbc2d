import type { z } from "zod";
import { ValidationError } from "../errors/errors.js";
import { checkWith } from "./issues.js";

/** Parses `input` with `schema` or throws a `ValidationError` whose issues name each field and rule. */
export function parseOrThrow<T extends z.ZodType>(
  schema: T,
  input: unknown,
  pathPrefix?: string,
): z.output<T> {
  const result = checkWith(schema, input);
  if (result.success) return result.data;
  const issues = result.issues.map((issue) => {
    if (pathPrefix === undefined) return issue;
    const path = issue.path === "(request)" ? pathPrefix : `${pathPrefix}.${issue.path}`;
    return { ...issue, path, message: `${path}${issue.message.slice(issue.path.length)}` };
  });
  throw new ValidationError(issues);
}
