import { STATUS_CODES } from "node:http";
import { ERROR_REASONS, type ErrorReason, type ValidationIssue } from "@purchase-auth/core";
import { newGuid } from "../core/ids.js";
import { NOTHING_TO_ESCAPE } from "../core/json-text.js";
import type { ApiResponse } from "./types.js";

// The response envelopes of specification sections 2.5 and 2.6. Every response gets a fresh `id`.

/** One entry of `error.errors`. INVALID_REQUEST entries also name the field and the rule broken. */
export interface ErrorEntry {
  reason: string;
  message: string;
  field?: string;
  rule?: string;
}

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

export function jsonResponse(
  status: number,
  payload: unknown,
  headers?: Record<string, string>,
): ApiResponse {
  return {
    status,
    headers: headers ? { ...JSON_HEADERS, ...headers } : JSON_HEADERS,
    body: JSON.stringify(payload),
  };
}

/** `{ id, data }`, or `{ id }` when there is no data. */
export function successResponse(
  status: number,
  data?: unknown,
  headers?: Record<string, string>,
): ApiResponse {
  return jsonResponse(status, data === undefined ? { id: newGuid() } : { id: newGuid(), data }, headers);
}

/**
 * The body of `successResponse(200, { authorizationId, orderId })` whose response id is `id`: the
 * text JSON.stringify makes, put together directly when no id needs escaping (a GUID never does).
 * This is every synchronous create's answer, and JSON.stringify's walk of two objects cost 2-3 times
 * as much. Anything else is left to JSON.stringify.
 */
export function authorizedBody(id: string, authorizationId: string, orderId: string): string {
  if (
    NOTHING_TO_ESCAPE.test(id) &&
    NOTHING_TO_ESCAPE.test(authorizationId) &&
    NOTHING_TO_ESCAPE.test(orderId)
  ) {
    // One join makes one flat string: a template literal leaves a tree of its parts, which the
    // idempotency store would keep for every create served in process (over HTTP the transport
    // flattens it when it measures the body).
    return [
      '{"id":"',
      id,
      '","data":{"authorizationId":"',
      authorizationId,
      '","orderId":"',
      orderId,
      '"}}',
    ].join("");
  }
  return JSON.stringify({ id, data: { authorizationId, orderId } });
}

/** `successResponse(200, { authorizationId, orderId })`, the answer of a synchronous create that succeeded. */
export function authorizedResponse(authorizationId: string, orderId: string): ApiResponse {
  return { status: 200, headers: JSON_HEADERS, body: authorizedBody(newGuid(), authorizationId, orderId) };
}

/** `{ id, error: { code, message, errors } }`; code equals the HTTP status. */
export function errorResponse(
  status: number,
  errors: readonly ErrorEntry[] = [],
  headers?: Record<string, string>,
): ApiResponse {
  const message = STATUS_CODES[status] ?? "Error";
  return jsonResponse(status, { id: newGuid(), error: { code: status, message, errors } }, headers);
}

/** An error entry for a reason of section 7.2, with the reason's description as message. */
export function reasonEntry(reason: string): ErrorEntry {
  const info = Object.hasOwn(ERROR_REASONS, reason) ? ERROR_REASONS[reason as ErrorReason] : undefined;
  return { reason, message: info?.description ?? reason };
}

export function reasonResponse(status: number, reason: string): ApiResponse {
  return errorResponse(status, [reasonEntry(reason)]);
}

/** 400 with one INVALID_REQUEST entry per validation issue (our shape; the specification leaves it open). */
export function validationResponse(issues: readonly ValidationIssue[]): ApiResponse {
  return errorResponse(
    400,
    issues.map((issue) => ({
      reason: "INVALID_REQUEST",
      message: issue.message,
      field: issue.path,
      rule: issue.rule,
    })),
  );
}

/** 400 for a body that is not what the route reads (not JSON, not UTF-8). */
export function malformedBodyResponse(message: string): ApiResponse {
  return errorResponse(400, [{ reason: "INVALID_REQUEST", message, field: "(request)", rule: "type" }]);
}
