import { type StoredTime, toStoredTime } from "../core/stored-time.js";
import { AuthorizedAnswer } from "../http/authorized-answer.js";
import { authorizedResponseWithId } from "../http/envelopes.js";
import type { ApiResponse } from "../http/types.js";

// The forms an outcome bound to an idempotency key is kept in: one object each, with the time it was
// stored as a small integer. The response is put together again only for a replay, with the same
// keys (absent ones absent) and the same values as the answer first sent.

/** Any outcome: its status, headers and body (one flat string). */
class StoredResponse {
  constructor(
    readonly storedAt: StoredTime,
    readonly status: number,
    readonly headers: ApiResponse["headers"],
    readonly body: ApiResponse["body"],
  ) {}

  response(): ApiResponse {
    const { status, headers, body } = this;
    if (headers === undefined) return body === undefined ? { status } : { status, body };
    return body === undefined ? { status, headers } : { status, headers, body };
  }
}

/** A synchronous create's 200 as its ids: the body is written again from them. */
class StoredAuthorized {
  constructor(
    readonly storedAt: StoredTime,
    readonly id: string,
    readonly authorizationId: string,
    readonly orderId: string,
  ) {}

  response(): ApiResponse {
    return authorizedResponseWithId(this.id, this.authorizationId, this.orderId);
  }
}

export type StoredOutcome = StoredResponse | StoredAuthorized;

export function storedOutcome(answer: ApiResponse | AuthorizedAnswer, now: number): StoredOutcome {
  const storedAt = toStoredTime(now);
  if (answer instanceof AuthorizedAnswer) {
    return new StoredAuthorized(storedAt, answer.id, answer.authorizationId, answer.orderId);
  }
  const { status, headers, body } = answer;
  // An answer put together by concatenation is a tree of strings until something flattens it
  // (over HTTP the transport does, in process nothing would): keep the one flat string instead.
  if (body !== undefined) Number(body);
  return new StoredResponse(storedAt, status, headers, body);
}

/** The status an answer is sent with (an AuthorizedAnswer is a 200). */
export function statusOf(answer: ApiResponse | AuthorizedAnswer): number {
  return answer instanceof AuthorizedAnswer ? 200 : answer.status;
}
