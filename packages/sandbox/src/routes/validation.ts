import { toValidationIssues } from "@purchase-auth/core";
import { validationResponse } from "../http/envelopes.js";
import type { ApiResponse } from "../http/types.js";

type SchemaError = Parameters<typeof toValidationIssues>[0];

/**
 * At most this many INVALID_REQUEST entries are returned. A garbage body of 1 MiB can break a rule
 * a million times; answering each would make a response of hundreds of megabytes.
 */
export const MAX_VALIDATION_ENTRIES = 100;

/** 400 for a body that failed one of core's schemas, one entry per issue (the first 100). */
export function validationFailure(error: SchemaError, input: unknown): ApiResponse {
  error.issues.splice(MAX_VALIDATION_ENTRIES); // this error is ours alone; mapping the rest is wasted work
  return validationResponse(toValidationIssues(error, input));
}
