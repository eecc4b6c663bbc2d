import { STATUS_CODES } from "node:http";
import type { GarbledBody } from "../faults.js";
import { errorResponse } from "./envelopes.js";
import type { ApiResponse } from "./types.js";

// The answers of the faults that imitate what stands between a client and the service: a gateway
// or load balancer (an HTML page, not the envelope), a rate limiter, a connection that mangles a body.

/** A gateway's own error page, e.g. 502 Bad Gateway, as nginx writes it. */
export function gatewayErrorResponse(status: number): ApiResponse {
  const title = `${status} ${STATUS_CODES[status] ?? "Error"}`;
  return {
    status,
    headers: { "content-type": "text/html" },
    body: `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n</body>\r\n</html>\r\n`,
  };
}

/** 429 with `Retry-After` in seconds, and an error envelope with an empty `errors` list. */
export function rateLimitedResponse(retryAfterSeconds: number): ApiResponse {
  return errorResponse(429, [], { "retry-after": String(retryAfterSeconds) });
}

/**
 * The real status and headers with a body a client cannot read: empty, or the first half of the real
 * body (a JSON object cut in half is never valid JSON; `{"id":` stands in for an empty body).
 */
export function garbledResponse(response: ApiResponse, body: GarbledBody): ApiResponse {
  if (body === "empty") return { ...response, body: "" };
  const real = response.body ?? "";
  return { ...response, body: real.length > 1 ? real.slice(0, Math.ceil(real.length / 2)) : '{"id":' };
}
