import type { Dispatcher } from "undici";
import {
  type AccessToken,
  TokenEndpointUnreachableError,
  type TokenProvider,
} from "../auth/token-provider.js";
import type { ResolvedOptions } from "../config/options.js";
import { OutcomeUnknownError, PurchaseAuthError } from "../errors/errors.js";
import { errorFromResponse, isInProgress, parseErrorBody } from "../errors/from-response.js";
import { backoffDelayMs, retryAfterMs, sleep } from "./backoff.js";
import {
  type HttpResponse,
  headerValue,
  isConnectionError,
  isStaleSocketReset,
  sendOnce,
} from "./transport.js";

/** One logical call: what to send and how to describe it in errors and logs. */
export interface Call {
  method: "GET" | "POST" | "DELETE";
  path: string;
  /** JSON body, already serialised. */
  body?: string;
  /** Sent on writes; every retry reuses it. */
  idempotencyKey?: string;
  /** The caller's signal: aborting stops retries and the attempt in flight. */
  signal?: AbortSignal;
  /** "Create authorization", "Capture order 123": the start of every error message. */
  operation: string;
}

/** Why the last attempt did not give a definite answer. */
type Uncertain =
  | { kind: "network"; error: unknown }
  | { kind: "timeout" }
  | { kind: "http"; response: HttpResponse }
  | { kind: "token"; error: TokenEndpointUnreachableError };

/**
 * Runs a call until it has a definite answer, retrying only what is safe to retry:
 * - an unknown outcome (network failure, attempt timeout, 503, key still in progress) with the
 *   SAME idempotency key, capped exponential backoff with jitter, within `deadlineMs`;
 * - a 401 once, after discarding the token that failed;
 * - a reset of a reused keep-alive socket once, at once, even with `maxRetries: 0`.
 * A definite answer (2xx, 400, 404, 422, ...) is never retried with the same key.
 */
export class Executor {
  readonly #options: ResolvedOptions;
  readonly #tokens: TokenProvider;
  readonly #dispatcher: Dispatcher;

  constructor(options: ResolvedOptions, tokens: TokenProvider, dispatcher: Dispatcher) {
    this.#options = options;
    this.#tokens = tokens;
    this.#dispatcher = dispatcher;
  }

  /** Returns the 2xx response, or throws the classified error. */
  async execute(call: Call): Promise<HttpResponse> {
    const { deadlineMs, timeoutMs, maxRetries, logger } = this.#options;
    const url = new URL(this.#options.baseUrl + call.path);
    const deadline = performance.now() + deadlineMs;
    const staticHeaders: Record<string, string> = { accept: "application/json" };
    if (call.body !== undefined) staticHeaders["content-type"] = "application/json";
    if (call.idempotencyKey !== undefined)
      staticHeaders[this.#options.headers.idempotencyKey] = call.idempotencyKey;

    let retries = 0;
    let refreshedAfter401 = false;
    let staleSocketRetried = false;
    // True once an attempt was sent whose effect we could not see: from then on, any failure
    // leaves the outcome unknown and must say so.
    let mayHaveTakenEffect = false;
    let last: Uncertain | undefined;

    for (let attempt = 1; ; attempt++) {
      throwIfAborted(call, mayHaveTakenEffect);
      let token: AccessToken | undefined;
      let response: HttpResponse | undefined;
      try {
        token = await this.#tokens.getToken();
        const remaining = deadline - performance.now();
        response = await sendOnce(this.#dispatcher, {
          method: call.method,
          url,
          headers: { ...staticHeaders, authorization: `Bearer ${token.value}` },
          ...(call.body === undefined ? {} : { body: call.body }),
          ...(call.signal === undefined ? {} : { signal: call.signal }),
          timeoutMs: Math.max(1, Math.min(timeoutMs, remaining)),
        });
      } catch (error) {
        // Aborted while the attempt was out: it may have arrived.
        if (call.signal?.aborted) throwIfAborted(call, mayHaveTakenEffect || token !== undefined);
        if (PurchaseAuthError.isInstance(error)) {
          // The token endpoint refused us. If an earlier attempt may have charged, say that first.
          if (!mayHaveTakenEffect) throw error;
          throw outcomeUnknown(
            call,
            "an earlier attempt may have succeeded, then authentication failed",
            error,
          );
        }
        if (error instanceof TokenEndpointUnreachableError) {
          last = { kind: "token", error };
        } else if (isTimeout(error)) {
          last = { kind: "timeout" };
          mayHaveTakenEffect = true;
        } else if (isConnectionError(error) || isUndiciError(error)) {
          // A connection that broke under the request may have delivered it.
          mayHaveTakenEffect = true;
          if (attempt === 1 && !staleSocketRetried && isStaleSocketReset(error)) {
            staleSocketRetried = true;
            logger.debug?.(
              "purchase-auth: connection reset on a reused socket; retrying once",
              context(call),
            );
            continue;
          }
          last = { kind: "network", error };
        } else {
          throw error;
        }
      }

      if (response !== undefined) {
        if (response.status >= 200 && response.status < 300) return response;
        if (response.status === 401 && !refreshedAfter401 && token !== undefined) {
          refreshedAfter401 = true;
          this.#tokens.invalidate(token);
          logger.debug?.("purchase-auth: 401, refreshing the access token and retrying once", context(call));
          continue;
        }
        const body = parseErrorBody(response.body);
        if (response.status === 401 && mayHaveTakenEffect) {
          // The service checks the bearer before the idempotency key: this 401 says nothing about
          // the earlier attempt, which may have charged.
          throw outcomeUnknown(
            call,
            "an earlier attempt may have succeeded, then authentication failed",
            errorFromResponse(401, body, call),
          );
        }
        if (response.status !== 503 && !isInProgress(response.status, body)) {
          throw errorFromResponse(response.status, body, call);
        }
        last = { kind: "http", response };
        mayHaveTakenEffect = true;
      }

      const hint =
        last?.kind === "http" ? retryAfterMs(headerValue(last.response.headers, "retry-after")) : undefined;
      const delay = backoffDelayMs(
        retries + 1,
        { baseDelayMs: this.#options.retryBaseDelayMs, maxDelayMs: this.#options.retryMaxDelayMs },
        hint,
      );
      if (retries >= maxRetries || performance.now() + delay >= deadline) {
        throw this.#giveUp(call, last!, mayHaveTakenEffect);
      }
      retries++;
      logger.warn?.("purchase-auth: retrying with the same idempotency key", {
        ...context(call),
        retry: retries,
        delayMs: delay,
        because: describeUncertain(last!),
      });
      try {
        await sleep(delay, call.signal);
      } catch {
        throwIfAborted(call, mayHaveTakenEffect);
      }
    }
  }

  /** The error for a call whose retries or deadline ran out. */
  #giveUp(call: Call, last: Uncertain, mayHaveTakenEffect: boolean): PurchaseAuthError {
    switch (last.kind) {
      case "http":
        return errorFromResponse(last.response.status, parseErrorBody(last.response.body), call);
      case "token":
        if (!mayHaveTakenEffect) return last.error.toPublicError();
        return outcomeUnknown(
          call,
          "an earlier attempt may have succeeded, then the token endpoint failed",
          last.error,
        );
      case "timeout":
        return outcomeUnknown(call, "timed out");
      case "network":
        return outcomeUnknown(call, "connection failed", last.error);
    }
  }
}

/** The error for a call that may or may not have taken effect: repeat it with the same key. */
function outcomeUnknown(call: Call, why: string, cause?: unknown): OutcomeUnknownError {
  return new OutcomeUnknownError(
    `${call.operation}: outcome unknown (${why}); repeat with the same idempotency key`,
    {
      ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** Throws the caller's abort: plainly before anything was sent, as an unknown outcome after. */
function throwIfAborted(call: Call, mayHaveTakenEffect: boolean): void {
  if (!call.signal?.aborted) return;
  if (!mayHaveTakenEffect) throw call.signal.reason;
  throw outcomeUnknown(call, "aborted by the caller after the request was sent", call.signal.reason);
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    name === "TimeoutError" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    (error instanceof DOMException && error.name === "TimeoutError")
  );
}

function isUndiciError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code.startsWith("UND_ERR");
}

/** What a log line says about a call: never the path, which can hold a customer token. */
function context(call: Call): Record<string, unknown> {
  return { operation: call.operation, method: call.method, idempotencyKey: call.idempotencyKey };
}

function describeUncertain(last: Uncertain): string {
  switch (last.kind) {
    case "http":
      return `HTTP ${last.response.status}`;
    case "timeout":
      return "attempt timed out";
    case "network":
      return `connection failed (${(last.error as { code?: string }).code ?? "unknown"})`;
    case "token":
      return "token endpoint unreachable";
  }
}
