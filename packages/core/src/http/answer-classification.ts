import type { PurchaseAuthError } from "../errors/errors.js";
import { errorFromResponse, type ParsedErrorBody, parseErrorBody } from "../errors/from-response.js";
import type { HttpResponse } from "./transport.js";

// What one HTTP answer means for a call, by the outcome model (README, "Outcomes"): a usable
// success, a 401 to recover once, an answer to repeat with the same key (and whether the attempt
// may have taken effect), or a definite answer.

export type AnswerVerdict =
  /** A 2xx this client can read: the call is done. */
  | { kind: "done" }
  /** 401: the bearer token was refused before anything else was looked at. */
  | { kind: "unauthorized"; error: PurchaseAuthError }
  /**
   * Says nothing definite about the key: repeat with the same key. `mayHaveTakenEffect` is false
   * only for answers that prove nothing was processed (429).
   */
  | { kind: "repeat"; mayHaveTakenEffect: boolean; unreadable?: boolean }
  /** A definite answer: `fromService` when it is the service's own error envelope. */
  | { kind: "definite"; error: PurchaseAuthError; fromService: boolean };

/** The reason the service gives while another request with the same key is running. */
const IN_PROGRESS = "IDEMPOTENCY_REQUEST_IN_PROGRESS";

/**
 * Statuses that say nothing definite about the key: every 5xx (a load balancer's 502/504 or a
 * 500 may come after the service committed; 503 is "can be repeated") and 408 (a proxy gave up).
 */
export function isUncertainStatus(status: number): boolean {
  return status === 408 || (status >= 500 && status <= 599);
}

export function classifyAnswer(
  response: HttpResponse,
  context: { operation: string; idempotencyKey?: string; accepts?: (response: HttpResponse) => boolean },
): AnswerVerdict {
  const { status } = response;
  if (status >= 200 && status < 300) {
    if (context.accepts === undefined || context.accepts(response)) return { kind: "done" };
    // Processed (a 2xx), but the answer cannot be read: ask again with the same key.
    return { kind: "repeat", mayHaveTakenEffect: true, unreadable: true };
  }
  const body = parseErrorBody(response.body);
  if (status === 401) return { kind: "unauthorized", error: errorFromResponse(401, body, context) };
  if (isInProgress(status, body)) return { kind: "repeat", mayHaveTakenEffect: true };
  if (isUncertainStatus(status)) return { kind: "repeat", mayHaveTakenEffect: true };
  if (status === 429) return { kind: "repeat", mayHaveTakenEffect: false };
  return {
    kind: "definite",
    error: errorFromResponse(status, body, context),
    fromService: body.requestId !== undefined,
  };
}

/**
 * Another request with this key is still running: the reason says so (whatever the status), or a
 * 409 whose body is not the service's envelope (it cannot say otherwise). A 409 envelope with
 * another reason is a definite answer.
 */
function isInProgress(status: number, body: ParsedErrorBody): boolean {
  if (body.reasons.some((entry) => entry.reason === IN_PROGRESS)) return true;
  return status === 409 && body.requestId === undefined;
}
