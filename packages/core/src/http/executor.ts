import type { Dispatcher } from "undici";
import {
  type AccessToken,
  TokenEndpointUnreachableError,
  type TokenProvider,
} from "../auth/token-provider.js";
import type { ResolvedOptions } from "../config/options.js";
import { PurchaseAuthError } from "../errors/errors.js";
import { classifyAnswer } from "./answer-classification.js";
import {
  type AttemptFailure,
  bounded,
  DEADLINE,
  describeFailure,
  isNotConnected,
  isTimeout,
} from "./attempt-failure.js";
import { backoffDelayMs, retryAfterMs, sleep } from "./backoff.js";
import {
  abortedOutcome,
  type CallDescription,
  type CallState,
  definiteOutcome,
  firstSentInFuture,
  gaveUpOutcome,
  isAboutTheKey,
  refusalOutcome,
  unknownOutcome,
  windowPassed,
} from "./call-outcome.js";
import { KeyMemory, type KeyTicket } from "./key-memory.js";
import { secretFreeCause } from "./secret-free-cause.js";
import { type HttpResponse, headerValue, isStaleSocketReset, sendOnce } from "./transport.js";

/** One logical call: what to send and how to describe it in errors and logs. */
export interface Call extends CallDescription {
  /** When this key was first sent by an earlier call: that call's outcome is unknown, not this one's. */
  firstSentAt?: Date;
  /** The time (epoch ms) the idempotency window is judged at, instead of the client's clock. */
  now?: number;
  /** False for a 2xx body this client cannot use: the answer is repeated with the same key. */
  accepts?: (response: HttpResponse) => boolean;
}

/** The failure a call starts with: no attempt yet, so running out of time is all there is to say. */
const NO_ATTEMPT_YET: AttemptFailure = Object.freeze({ kind: "deadline" });

/** Where a path is sent: as `new URL(baseUrl + path)` gives it, computed once per path. */
interface Target {
  origin: string;
  path: string;
}

/** Paths remembered per client (the fixed ones, and the latest ones with an id in them). */
const MAX_TARGETS = 64;

/** Thrown out of an attempt to end the call with this error. */
class EndCall {
  /** `aboutTheKey`: the service's own definite answer about the call's key, stored under it. */
  constructor(
    readonly error: PurchaseAuthError,
    readonly aboutTheKey = false,
  ) {}
}

/**
 * Runs a call until it has a definite answer, repeating only what is safe to repeat, always with
 * the SAME idempotency key: connection failures, attempt timeouts, every 5xx, 408, 409 in progress,
 * 429 (after its Retry-After, when that fits the deadline), a 2xx whose body cannot be read; a 401
 * once after discarding the token; a reset of a reused keep-alive socket once at once. No attempt
 * (nor the token refresh after a 401) starts after the deadline or an abort. Every failure ends as
 * one outcome (README, "Outcomes"): refused, not_sent, or unknown.
 */
export class Executor {
  readonly #options: ResolvedOptions;
  readonly #tokens: TokenProvider;
  readonly #dispatcher: Dispatcher;
  readonly #now: () => number;
  readonly #targets = new Map<string, Target>();
  readonly #headerSets: ReadonlyArray<Record<string, string>>;
  readonly #keys = new KeyMemory();
  /** The last token sent and its header value, so each call does not build the string again. */
  #bearerOf: AccessToken | undefined;
  #bearer = "";

  constructor(options: ResolvedOptions, tokens: TokenProvider, dispatcher: Dispatcher) {
    this.#options = options;
    this.#tokens = tokens;
    this.#dispatcher = dispatcher;
    this.#now = () => options.now();
    // Indexed by (body ? 1 : 0) + (key ? 2 : 0); every name in the order it is sent.
    this.#headerSets = [false, true, false, true].map((withBody, index) => {
      const headers: Record<string, string> = { accept: "application/json" };
      if (withBody) headers["content-type"] = "application/json";
      if (index >= 2) headers[options.headers.idempotencyKey] = "";
      headers.authorization = "";
      return headers;
    });
  }

  /** Returns the 2xx response, or throws the classified error (always one of ours). */
  async execute(call: Call): Promise<HttpResponse> {
    let now = this.#now;
    if (call.now !== undefined) {
      const clockOffset = call.now - this.#options.now();
      now = () => this.#options.now() + clockOffset;
    }
    // A key sent before (the caller says so, or its last call here ended unknown) may have taken
    // effect already: this call can make its outcome definite, never "not sent".
    const firstSentAt = earliest(call.firstSentAt, this.#rememberedSentAt(call));
    const state: CallState = { firstSentAt, mayHaveTakenEffect: firstSentAt !== undefined };
    this.#checkFirstSentAt(call, now());
    const { deadlineMs, timeoutMs, maxRetries, logger } = this.#options;
    const target = this.#target(call.path);
    const callDeadlineMs = call.deadlineMs === undefined ? deadlineMs : Math.min(deadlineMs, call.deadlineMs);
    const deadline = performance.now() + callDeadlineMs;
    // Writes with a key are counted while they run: see #ended.
    const key = call.write === undefined ? undefined : call.idempotencyKey;
    const ticket = key === undefined ? undefined : this.#keys.start(key);
    // A send known from before (the caller's record, or this client's memory) counts for the calls
    // beside this one too: their window is counted from it.
    if (ticket !== undefined && firstSentAt !== undefined) this.#keys.sent(ticket, firstSentAt);

    let retries = 0;
    let refreshedAfter401 = false;
    let staleSocketRetried = false;
    let last: AttemptFailure = NO_ATTEMPT_YET;
    /** Throws unless another attempt may start now: not after an abort, the deadline, or the window. */
    const mayStart = (): number => {
      if (call.signal?.aborted) throw new EndCall(abortedOutcome(call, state, now()));
      const left = deadline - performance.now();
      if (left <= 0) throw new EndCall(gaveUpOutcome(call, state, last, now()));
      this.#checkWindow(call, state, now());
      return left;
    };

    try {
      this.#checkWindow(call, state, now());
      for (;;) {
        const beforeToken = mayStart();
        // A cached token is used at once; only a missing or expired one is waited for.
        const fetched = this.#tokens.usableNow() ?? (await this.#token(call, state, beforeToken, now));
        const token = fetched instanceof TokenEndpointUnreachableError ? undefined : fetched;
        let response: HttpResponse | undefined;
        if (token === undefined) {
          last = { kind: "token", error: fetched as TokenEndpointUnreachableError };
        } else {
          const left = mayStart();
          if (state.firstSentAt === undefined) {
            state.firstSentAt = new Date(now());
            if (ticket !== undefined) this.#keys.sent(ticket, state.firstSentAt);
          }
          try {
            response = await sendOnce(this.#dispatcher, {
              method: call.method,
              origin: target.origin,
              path: target.path,
              headers: this.#headers(call, token),
              body: call.body,
              signal: call.signal,
              timeoutMs: Math.max(1, Math.min(timeoutMs, left)),
            });
          } catch (error) {
            if (call.signal?.aborted) {
              // Aborted while the attempt was out: it may have arrived.
              state.mayHaveTakenEffect = true;
              throw new EndCall(abortedOutcome(call, state, now()));
            }
            const cause = secretFreeCause(error, [token.value]);
            if (isNotConnected(error)) {
              last = { kind: "not_connected", error: cause }; // refused before any byte: nothing sent
            } else {
              state.mayHaveTakenEffect = true; // the connection broke or timed out under the request
              if (isTimeout(error)) {
                last = { kind: "timeout" };
              } else {
                last = { kind: "network", error: cause };
                if (!staleSocketRetried && retries === 0 && isStaleSocketReset(error)) {
                  staleSocketRetried = true;
                  logger.debug?.(
                    "purchase-auth: connection reset on a reused socket; retrying once",
                    context(call),
                  );
                  continue;
                }
              }
            }
          }
        }

        if (response !== undefined) {
          const verdict = classifyAnswer(response, call);
          switch (verdict.kind) {
            case "done":
              if (call.idempotencyKey !== undefined) this.#keys.forget(call.idempotencyKey);
              return response;
            case "definite": {
              const error = definiteOutcome(call, state, verdict.error, verdict.fromService, now());
              throw new EndCall(error, error === verdict.error && isAboutTheKey(error, verdict.fromService));
            }
            case "unauthorized": {
              // The service checks the bearer before the key: a 401 says nothing about earlier attempts.
              const refusal = () => refusalOutcome(call, state, verdict.error, "then HTTP 401", now());
              if (refreshedAfter401) throw new EndCall(refusal());
              refreshedAfter401 = true;
              this.#tokens.invalidate(token!);
              if (call.signal?.aborted) throw new EndCall(abortedOutcome(call, state, now()));
              if (deadline - performance.now() <= 0) throw new EndCall(refusal());
              logger.debug?.(
                "purchase-auth: 401, refreshing the access token and retrying once",
                context(call),
              );
              continue;
            }
            case "repeat":
              if (verdict.mayHaveTakenEffect) state.mayHaveTakenEffect = true;
              last = { kind: "http", response, ...(verdict.unreadable ? { unreadable: true } : {}) };
              break;
          }
        }

        const serverHint =
          last.kind === "http" ? retryAfterMs(headerValue(last.response.headers, "retry-after")) : undefined;
        const delay = backoffDelayMs(
          retries + 1,
          { baseDelayMs: this.#options.retryBaseDelayMs, maxDelayMs: this.#options.retryMaxDelayMs },
          serverHint,
        );
        // Retry-After is honoured as given: when it does not fit the deadline, the call ends now.
        if (retries >= maxRetries || performance.now() + delay >= deadline) {
          throw new EndCall(gaveUpOutcome(call, state, last, now()));
        }
        retries++;
        logger.warn?.("purchase-auth: retrying with the same idempotency key", {
          ...context(call),
          retry: retries,
          delayMs: delay,
          because: describeFailure(last),
        });
        await sleep(delay, call.signal).catch(() => undefined); // an abort is seen by mayStart
      }
    } catch (error) {
      if (error instanceof EndCall)
        throw this.#ended(call, ticket, state, error.error, error.aboutTheKey, now());
      // Not ours (a bug somewhere below): a write that may have taken effect still says so.
      if (call.write !== undefined && state.mayHaveTakenEffect && call.idempotencyKey !== undefined) {
        const unknown = unknownOutcome(call, state, "then an unexpected error", error, now());
        throw this.#ended(call, ticket, state, unknown, false, now());
      }
      throw error;
    } finally {
      if (ticket !== undefined) this.#keys.finish(ticket);
    }
  }

  /**
   * A token, waited for no longer than the deadline and not past the caller's abort, or why the
   * token endpoint could not be reached (nothing was sent: the loop repeats). Ends the call
   * when the endpoint refuses our credentials, or the deadline or an abort comes first.
   */
  async #token(
    call: Call,
    state: CallState,
    left: number,
    now: () => number,
  ): Promise<AccessToken | TokenEndpointUnreachableError> {
    try {
      return await bounded(this.#tokens.getToken(), call.signal, left);
    } catch (error) {
      if (call.signal?.aborted) throw new EndCall(abortedOutcome(call, state, now()));
      if (error === DEADLINE) throw new EndCall(gaveUpOutcome(call, state, { kind: "deadline" }, now()));
      if (error instanceof TokenEndpointUnreachableError) return error;
      if (PurchaseAuthError.isInstance(error)) {
        // The token endpoint refused the credentials: nothing of this attempt was sent.
        throw new EndCall(refusalOutcome(call, state, error, "then the token request was refused", now()));
      }
      throw error;
    }
  }

  /** Origin and path of `path`, as `new URL(baseUrl + path)` gives them, remembered per path. */
  #target(path: string): Target {
    let target = this.#targets.get(path);
    if (target === undefined) {
      const url = new URL(this.#options.baseUrl + path);
      target = { origin: url.origin, path: url.pathname + url.search };
      if (this.#targets.size >= MAX_TARGETS) this.#targets.clear();
      this.#targets.set(path, target);
    }
    return target;
  }

  /**
   * The headers of one attempt: a copy of the call's kind of header set, built once per client,
   * with the key and the token filled in (an object, as a dispatcher that looks at them expects).
   */
  #headers(call: Call, token: AccessToken): Record<string, string> {
    if (token !== this.#bearerOf) {
      this.#bearerOf = token;
      this.#bearer = `Bearer ${token.value}`;
    }
    const withBody = call.body !== undefined;
    const key = call.idempotencyKey;
    const headers = { ...this.#headerSets[(withBody ? 1 : 0) + (key === undefined ? 0 : 2)]! };
    if (key !== undefined) headers[this.#options.headers.idempotencyKey] = key;
    headers.authorization = this.#bearer;
    return headers;
  }

  /** When the call's key was first sent, if its last call in this client ended unknown. */
  #rememberedSentAt(call: Call): Date | undefined {
    const key = call.idempotencyKey;
    return call.write === undefined || key === undefined ? undefined : this.#keys.firstSentAt(key);
  }

  /**
   * The error a write ended with. An unknown outcome's key is remembered; only the service's own
   * answer about the key (or a success) forgets it. Any other end (not sent, 429s, a refused token)
   * speaks for this call alone: when another call with the key ran beside it (even one that ended in
   * a success meanwhile), or ended unknown before, the key's outcome is unknown, and so is this
   * call's, first sent when the earliest of them was.
   */
  #ended(
    call: Call,
    ticket: KeyTicket | undefined,
    state: CallState,
    error: PurchaseAuthError,
    aboutTheKey: boolean,
    nowMs: number,
  ): PurchaseAuthError {
    const key = call.idempotencyKey;
    if (call.write === undefined || key === undefined || ticket === undefined) return error;
    if (error.outcome === "unknown") {
      if (state.firstSentAt !== undefined) this.#keys.remember(key, state.firstSentAt);
      return error;
    }
    if (aboutTheKey) {
      this.#keys.forget(key);
      return error;
    }
    const sentAt = this.#keys.firstSentAt(key);
    if (sentAt === undefined && !this.#keys.overlapped(ticket)) return error;
    const firstSentAt = earliest(earliest(sentAt, this.#keys.firstSentBeside(ticket)), state.firstSentAt);
    const sentElsewhere = { firstSentAt, mayHaveTakenEffect: true };
    return unknownOutcome(call, sentElsewhere, "by another call with this key", error, nowMs);
  }

  /**
   * A first-sent time in the future (another machine's clock, a wrong record) says the key was sent,
   * but not how long ago: it is never sent again, and the write's fate stays unknown (not "not
   * sent", which would invite a new key and a second charge).
   */
  #checkFirstSentAt(call: Call, nowMs: number): void {
    const sentAt = call.firstSentAt;
    if (sentAt === undefined || sentAt.getTime() <= nowMs + this.#options.idempotencySafetyMarginMs) return;
    throw firstSentInFuture(call, sentAt, nowMs);
  }

  /** A key older than the service's idempotency window (less the margin) is never sent again. */
  #checkWindow(call: Call, state: CallState, nowMs: number): void {
    const sentAt = state.firstSentAt;
    if (sentAt === undefined || call.idempotencyKey === undefined || call.write === undefined) return;
    const { idempotencyWindowMs, idempotencySafetyMarginMs } = this.#options;
    if (nowMs - sentAt.getTime() < idempotencyWindowMs - idempotencySafetyMarginMs) return;
    throw new EndCall(windowPassed(call, sentAt));
  }
}

function earliest(a: Date | undefined, b: Date | undefined): Date | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return a.getTime() <= b.getTime() ? a : b;
}

/** What a log line says about a call: never the path, which can hold a customer token. */
function context(call: Call): Record<string, unknown> {
  return { operation: call.operation, method: call.method, idempotencyKey: call.idempotencyKey };
}
