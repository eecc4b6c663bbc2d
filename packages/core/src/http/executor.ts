import type { Dispatcher } from "undici";
import {
  type AccessToken,
  TokenEndpointUnreachableError,
  type TokenProvider,
} from "../auth/token-provider.js";
import type { ResolvedOptions } from "../config/options.js";
import {
  AbortedError,
  IdempotencyError,
  IdempotencyWindowPassedError,
  OutcomeUnknownError,
  type PurchaseAuthError,
  ServiceUnavailableError,
  UnexpectedResponseError,
  type UnknownWrite,
} from "../errors/errors.js";
import { errorFromResponse, isInProgress, parseErrorBody } from "../errors/from-response.js";
import {
  type AttemptFailure,
  bounded,
  DEADLINE,
  describeFailure,
  isNotConnected,
  isTimeout,
  isUncertainStatus,
  isUndiciError,
} from "./attempt-failure.js";
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
  /** Set on writes: the operation an unknown outcome's record names. */
  write?: UnknownWrite["operation"];
  /** When this key was first sent by an earlier call; past the idempotency window nothing is sent. */
  firstSentAt?: Date;
  /** False for a 2xx body this client cannot use: the answer is retried with the same key. */
  accepts?: (response: HttpResponse) => boolean;
}

/**
 * Runs a call until it has a definite answer, retrying only what is safe to retry, always with the
 * SAME idempotency key: network failures, attempt timeouts, 500/502/503/504, 409 in progress, 429
 * (honouring Retry-After), a 2xx whose body cannot be read; a 401 once after discarding the token;
 * a reset of a reused keep-alive socket once at once. No attempt starts after the deadline or an
 * abort. Every failure ends as one outcome (README, "Outcomes"): refused, not_sent, or unknown, and
 * once an attempt may have taken effect only a definite answer about the same key is anything but
 * unknown.
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
    this.#checkWindow(call);
    const url = new URL(this.#options.baseUrl + call.path);
    const deadline = performance.now() + deadlineMs;
    const staticHeaders: Record<string, string> = { accept: "application/json" };
    if (call.body !== undefined) staticHeaders["content-type"] = "application/json";
    if (call.idempotencyKey !== undefined)
      staticHeaders[this.#options.headers.idempotencyKey] = call.idempotencyKey;

    const state: CallState = { firstSentAt: call.firstSentAt, mayHaveTakenEffect: false };
    let retries = 0;
    let refreshedAfter401 = false;
    let staleSocketRetried = false;
    let last: AttemptFailure | undefined;

    for (;;) {
      this.#throwIfAborted(call, state);
      const remaining = deadline - performance.now();
      if (remaining <= 0) throw this.#giveUp(call, last ?? { kind: "deadline" }, state);
      let token: AccessToken | undefined;
      try {
        token = await bounded(this.#tokens.getToken(), call.signal, remaining);
      } catch (error) {
        this.#throwIfAborted(call, state);
        if (error === DEADLINE) throw this.#giveUp(call, { kind: "deadline" }, state);
        if (!(error instanceof TokenEndpointUnreachableError)) {
          // The token endpoint refused the credentials: nothing of this attempt was sent.
          if (state.mayHaveTakenEffect) throw this.#unknown(call, state, "then authentication failed", error);
          throw error;
        }
        last = { kind: "token", error };
      }

      let response: HttpResponse | undefined;
      if (token !== undefined) {
        const left = deadline - performance.now();
        if (left <= 0) throw this.#giveUp(call, last ?? { kind: "deadline" }, state);
        state.firstSentAt ??= new Date(this.#options.now());
        try {
          response = await sendOnce(this.#dispatcher, {
            method: call.method,
            url,
            headers: { ...staticHeaders, authorization: `Bearer ${token.value}` },
            ...(call.body === undefined ? {} : { body: call.body }),
            ...(call.signal === undefined ? {} : { signal: call.signal }),
            timeoutMs: Math.max(1, Math.min(timeoutMs, left)),
          });
          last = undefined;
        } catch (error) {
          if (call.signal?.aborted) {
            // Aborted while the attempt was out: it may have arrived.
            state.mayHaveTakenEffect = true;
            this.#throwIfAborted(call, state);
          }
          if (isNotConnected(error)) {
            last = { kind: "not_connected", error };
          } else if (isTimeout(error)) {
            last = { kind: "timeout" };
            state.mayHaveTakenEffect = true;
          } else if (isConnectionError(error) || isUndiciError(error)) {
            state.mayHaveTakenEffect = true;
            if (!staleSocketRetried && retries === 0 && isStaleSocketReset(error)) {
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
      }

      if (response !== undefined) {
        if (response.status >= 200 && response.status < 300) {
          if (call.accepts === undefined || call.accepts(response)) return response;
          // The service committed, but its answer cannot be read: ask again with the same key.
          state.mayHaveTakenEffect = true;
          last = { kind: "http", response, unreadable: true };
        } else if (response.status === 401) {
          if (!refreshedAfter401) {
            refreshedAfter401 = true;
            if (token !== undefined) this.#tokens.invalidate(token);
            logger.debug?.(
              "purchase-auth: 401, refreshing the access token and retrying once",
              context(call),
            );
            continue; // the loop's deadline and abort checks come first
          }
          // The service checks the bearer before the key: a 401 says nothing about an earlier attempt.
          const refusal = errorFromResponse(401, parseErrorBody(response.body), call);
          if (state.mayHaveTakenEffect)
            throw this.#unknown(call, state, "then authentication failed", refusal);
          throw refusal;
        } else {
          const body = parseErrorBody(response.body);
          if (isUncertainStatus(response.status) || isInProgress(response.status, body)) {
            state.mayHaveTakenEffect = true;
            last = { kind: "http", response };
          } else if (response.status === 429) {
            last = { kind: "http", response };
          } else {
            throw this.#definite(call, state, errorFromResponse(response.status, body, call));
          }
        }
      }

      const hint =
        last?.kind === "http" ? retryAfterMs(headerValue(last.response.headers, "retry-after")) : undefined;
      const delay = backoffDelayMs(
        retries + 1,
        { baseDelayMs: this.#options.retryBaseDelayMs, maxDelayMs: this.#options.retryMaxDelayMs },
        hint,
      );
      if (retries >= maxRetries || performance.now() + delay >= deadline) {
        throw this.#giveUp(call, last!, state);
      }
      retries++;
      logger.warn?.("purchase-auth: retrying with the same idempotency key", {
        ...context(call),
        retry: retries,
        delayMs: delay,
        because: describeFailure(last!),
      });
      try {
        await sleep(delay, call.signal);
      } catch {
        this.#throwIfAborted(call, state);
      }
    }
  }

  /** A key older than the service's idempotency window is never sent again. */
  #checkWindow(call: Call): void {
    if (call.firstSentAt === undefined || call.idempotencyKey === undefined) return;
    const { idempotencyWindowMs, idempotencySafetyMarginMs, now } = this.#options;
    if (now() - call.firstSentAt.getTime() < idempotencyWindowMs - idempotencySafetyMarginMs) return;
    throw windowPassed(call, call.firstSentAt);
  }

  /**
   * A definite answer: the error as it is, except where it cannot be about what an earlier
   * uncertain attempt did (an unexpected status), or says the key's answer is gone.
   */
  #definite(call: Call, state: CallState, error: PurchaseAuthError): PurchaseAuthError {
    if (call.write === undefined) return error;
    const expired = IdempotencyError.isInstance(error) && error.reason === "IDEMPOTENCY_RESPONSE_EXPIRED";
    if (expired && (state.mayHaveTakenEffect || call.firstSentAt !== undefined)) {
      return windowPassed(call, state.firstSentAt ?? new Date(this.#options.now()), error);
    }
    if (UnexpectedResponseError.isInstance(error) && state.mayHaveTakenEffect) {
      return this.#unknown(call, state, `then HTTP ${error.status}`, error);
    }
    return error;
  }

  /** The error for a call whose retries or deadline ran out. */
  #giveUp(call: Call, last: AttemptFailure, state: CallState): PurchaseAuthError {
    if (state.mayHaveTakenEffect && call.write !== undefined) {
      return this.#unknown(call, state, describeFailure(last), "error" in last ? last.error : undefined);
    }
    if (last.kind === "http" && !isUncertainStatus(last.response.status) && last.response.status !== 429) {
      return errorFromResponse(last.response.status, parseErrorBody(last.response.body), call);
    }
    const why = describeFailure(last);
    return new ServiceUnavailableError(
      `${call.operation}: the service could not be reached (${why}); nothing was charged or changed, try again later`,
      {
        outcome: last.kind === "http" ? "refused" : "not_sent",
        ...(last.kind === "http" ? { status: last.response.status } : {}),
        ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
        ...("error" in last ? { cause: last.error } : {}),
      },
    );
  }

  /** The error for a write that may or may not have taken effect: repeat it with the same key. */
  #unknown(call: Call, state: CallState, why: string, cause?: unknown): OutcomeUnknownError {
    const write: UnknownWrite = {
      operation: call.write ?? "authorizations.create",
      method: call.method === "DELETE" ? "DELETE" : "POST",
      path: call.path,
      ...(call.body === undefined ? {} : { body: call.body }),
      idempotencyKey: call.idempotencyKey!,
      firstSentAt: (state.firstSentAt ?? new Date(this.#options.now())).toISOString(),
    };
    return new OutcomeUnknownError(
      `${call.operation}: outcome unknown (an attempt may have reached the service, ${why}); repeat with the same idempotency key`,
      { write, ...(cause === undefined ? {} : { cause }) },
    );
  }

  /** Throws the caller's abort: AbortedError before anything was sent, an unknown outcome after. */
  #throwIfAborted(call: Call, state: CallState): void {
    if (!call.signal?.aborted) return;
    if (state.mayHaveTakenEffect && call.write !== undefined) {
      throw this.#unknown(call, state, "then the caller aborted", call.signal.reason);
    }
    throw new AbortedError(`${call.operation}: aborted by the caller before anything was sent`, {
      cause: call.signal.reason,
      ...(call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey }),
    });
  }
}

interface CallState {
  /** When this key was first sent (by this call or an earlier one). */
  firstSentAt: Date | undefined;
  /** True once an attempt was sent whose effect we could not see. */
  mayHaveTakenEffect: boolean;
}

function windowPassed(call: Call, firstSentAt: Date, cause?: unknown): IdempotencyWindowPassedError {
  return new IdempotencyWindowPassedError(
    `${call.operation}: this idempotency key was first sent at ${firstSentAt.toISOString()}, past the service's idempotency window; it is not sent again (it could charge twice). Look the write up at the service.`,
    { idempotencyKey: call.idempotencyKey!, firstSentAt, ...(cause === undefined ? {} : { cause }) },
  );
}

/** What a log line says about a call: never the path, which can hold a customer token. */
function context(call: Call): Record<string, unknown> {
  return { operation: call.operation, method: call.method, idempotencyKey: call.idempotencyKey };
}
