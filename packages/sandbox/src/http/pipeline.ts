import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { DEFAULT_HEADERS, isGuid } from "@purchase-auth/core";
import type { SandboxContext } from "../context.js";
import type { FaultKind, FaultView } from "../faults.js";
import type { ServiceCall, ServiceRoute } from "../routes/service-route.js";
import {
  handleTokenRequest,
  tokenEndpointRateLimited,
  tokenEndpointUnavailable,
} from "../routes/token-endpoint.js";
import { MAX_VALIDATION_ENTRIES } from "../routes/validation.js";
import type { AccessToken } from "../state/access-tokens.js";
import { IdempotencyStore } from "../state/idempotency.js";
import { bodyLength, bodyText, mediaType, parseJsonBody } from "./body.js";
import { parseBoundedJson } from "./bounded-json.js";
import { errorResponse, malformedBodyResponse, reasonResponse } from "./envelopes.js";
import { garbledResponse, gatewayErrorResponse, rateLimitedResponse } from "./fault-responses.js";
import type { RouteParams } from "./router.js";
import { type ApiResponse, headerValue, type SandboxOutcome, type SandboxRequest } from "./types.js";

const IDEMPOTENCY_HEADER = DEFAULT_HEADERS.idempotencyKey.toLowerCase();
/** Bodies above this size are read by `parseBoundedJson` (smaller ones cannot be costly to parse). */
const BOUNDED_JSON_ABOVE_BYTES = 64 * 1024;
const DESTROY: SandboxOutcome = { kind: "destroy" };

/** A step of the pipeline either yields a value or has already decided the outcome. */
type Step<T, Other = never> = { ok: true; value: T } | { ok: false; outcome: SandboxOutcome | Other };
/** A stored outcome to answer again (after-commit faults apply to it too). */
type Replay = { kind: "replay"; response: ApiResponse };

const AFTER_COMMIT_KINDS: readonly FaultKind[] = [
  "drop_after_commit",
  "gateway_error",
  "garbled_success",
  "delay_after_commit",
];

/** Faults on arrival at a service route, without and with `in_progress` (idempotent routes). */
const ARRIVAL_KINDS: readonly FaultKind[] = [
  "reset_before_processing",
  "unavailable",
  "gateway_error",
  "rate_limited",
];
const IDEMPOTENT_ARRIVAL_KINDS: readonly FaultKind[] = [...ARRIVAL_KINDS, "in_progress"];
const TOKEN_ENDPOINT_KINDS: readonly FaultKind[] = [...ARRIVAL_KINDS, "token_endpoint_down"];
const REVOKE_KINDS: readonly FaultKind[] = ["revoke_access_token"];
const LATENCY_KINDS: readonly FaultKind[] = ["latency"];

/** Arrival faults take a gateway_error only in its before_commit phase. */
const beforeCommitOnly = (fault: FaultView) =>
  fault.kind !== "gateway_error" || fault.phase === "before_commit";

function respond(response: ApiResponse): SandboxOutcome {
  return { kind: "respond", ...response };
}

function answer(response: ApiResponse): { ok: false; outcome: SandboxOutcome } {
  return { ok: false, outcome: respond(response) };
}

/**
 * The checks every service request goes through, in the order of supplement D:
 * faults on arrival → 401 → 415 → 413 → malformed JSON (400) → idempotency key (400 parsing, replay,
 * 409 in progress, 422 expired) → latency fault → the route → outcome stored under the key →
 * after-commit faults.
 */
export class ServicePipeline {
  readonly #ctx: SandboxContext;
  /** Aborts latency waits on close. */
  readonly #closing = new AbortController();

  constructor(ctx: SandboxContext) {
    this.#ctx = ctx;
    // Every latency wait listens to this one signal; many at once is expected, not a leak.
    setMaxListeners(0, this.#closing.signal);
  }

  close(): void {
    this.#closing.abort();
  }

  /** Synchronous unless a latency fault makes it wait (as every serve* here). */
  serveTokenEndpoint(request: SandboxRequest, path: string): SandboxOutcome | Promise<SandboxOutcome> {
    const { method } = request;
    const fault = this.#ctx.faults.take(TOKEN_ENDPOINT_KINDS, method, path, beforeCommitOnly);
    switch (fault?.kind) {
      case undefined:
        break;
      case "reset_before_processing":
        return DESTROY;
      case "gateway_error":
        return respond(gatewayErrorResponse(fault.status ?? 502));
      case "rate_limited":
        return respond(tokenEndpointRateLimited(fault.retryAfterSeconds ?? 1));
      default:
        return respond(tokenEndpointUnavailable());
    }
    const waited = this.#waitOutLatency(method, path);
    if (waited === true) return this.#afterCommit(handleTokenRequest(this.#ctx, request), method, path);
    return waited.then((ok) =>
      ok ? this.#afterCommit(handleTokenRequest(this.#ctx, request), method, path) : DESTROY,
    );
  }

  serveService(
    route: ServiceRoute,
    request: SandboxRequest,
    path: string,
    params: RouteParams,
    resource: string,
  ): SandboxOutcome | Promise<SandboxOutcome> {
    const { method } = request;
    const arrival = this.#arrivalFault(route, method, path);
    if (arrival !== undefined) return arrival;

    // One reading of the clock for the checks; the route reads it again after any latency wait.
    const arrivedAt = this.#ctx.clock.now();
    const principal = this.#authenticate(request, path, arrivedAt);
    if (!principal.ok) return principal.outcome;
    const body = this.#readBody(route, request);
    if (!body.ok) return body.outcome;
    const key = this.#takeIdempotencyKey(route, request, principal.value, resource, arrivedAt);
    if (!key.ok) {
      const { outcome } = key;
      return outcome.kind === "replay" ? this.#afterCommit(outcome.response, method, path) : outcome;
    }
    const { idempotencyKey, scope } = key.value;
    const call: ServiceCall = { principal: principal.value, params, body: body.value, idempotencyKey };

    let waited: true | Promise<boolean>;
    try {
      waited = this.#waitOutLatency(method, path);
    } catch (error) {
      if (scope !== undefined) this.#ctx.idempotency.release(scope);
      throw error;
    }
    if (waited === true) return this.#run(route, call, scope, method, path);
    return waited.then(
      (ok) => {
        if (ok) return this.#run(route, call, scope, method, path);
        if (scope !== undefined) this.#ctx.idempotency.release(scope);
        return DESTROY;
      },
      (error: unknown) => {
        if (scope !== undefined) this.#ctx.idempotency.release(scope);
        throw error;
      },
    );
  }

  /** The route itself, its outcome stored under the key (a key is released if the route throws). */
  #run(
    route: ServiceRoute,
    call: ServiceCall,
    scope: string | undefined,
    method: string,
    path: string,
  ): SandboxOutcome | Promise<SandboxOutcome> {
    // Reading the clock costs ~0.2 µs on a virtual machine; a create read it eight times.
    const now = this.#ctx.clock.now();
    let response: ApiResponse;
    try {
      response = route.handle(call, now);
    } catch (error) {
      if (scope !== undefined) this.#ctx.idempotency.release(scope);
      throw error;
    }
    if (scope !== undefined) this.#ctx.idempotency.complete(scope, response, now);
    return this.#afterCommit(response, method, path);
  }

  /** Faults that answer before anything is looked at: nothing is stored for them. */
  #arrivalFault(route: ServiceRoute, method: string, path: string): SandboxOutcome | undefined {
    const kinds = route.idempotent ? IDEMPOTENT_ARRIVAL_KINDS : ARRIVAL_KINDS;
    const fault = this.#ctx.faults.take(kinds, method, path, beforeCommitOnly);
    switch (fault?.kind) {
      case "reset_before_processing":
        return DESTROY;
      case "unavailable":
        return respond(reasonResponse(503, "SERVICE_UNAVAILABLE"));
      case "in_progress":
        return respond(reasonResponse(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS"));
      case "gateway_error":
        return respond(gatewayErrorResponse(fault.status ?? 502));
      case "rate_limited":
        return respond(rateLimitedResponse(fault.retryAfterSeconds ?? 1));
      default:
        return undefined;
    }
  }

  /** 401 for a missing, unknown, expired or revoked bearer token (error envelope, empty errors). */
  #authenticate(request: SandboxRequest, path: string, now: number): Step<AccessToken> {
    const ctx = this.#ctx;
    const bearer = bearerToken(headerValue(request, "authorization"));
    if (bearer !== undefined && ctx.faults.take(REVOKE_KINDS, request.method, path)) {
      ctx.accessTokens.revoke(bearer);
    }
    const principal = bearer === undefined ? undefined : ctx.accessTokens.find(bearer, now);
    if (principal !== undefined) return { ok: true, value: principal };
    const challenge = bearer === undefined ? "Bearer" : 'Bearer error="invalid_token"';
    return answer(errorResponse(401, [], { "www-authenticate": challenge }));
  }

  /** 415 (not JSON), 413 (too large), 400 (malformed). Write routes of orders read an empty body as `{}`. */
  #readBody(route: ServiceRoute, request: SandboxRequest): Step<unknown> {
    if (route.body === "none") return { ok: true, value: undefined };
    const tooLarge = request.bodyTooLarge === true || bodyLength(request) > this.#ctx.options.maxBodyBytes;
    const emptyAllowed = route.body === "optional_json" && !tooLarge && bodyLength(request) === 0;
    if (!emptyAllowed && mediaType(headerValue(request, "content-type")) !== "application/json") {
      return answer(errorResponse(415));
    }
    if (tooLarge) return answer(errorResponse(413));
    if (route.walkedArrays !== undefined && bodyLength(request) > BOUNDED_JSON_ABOVE_BYTES) {
      const text = bodyText(request);
      const read =
        text === undefined ? undefined : parseBoundedJson(text, route.walkedArrays, MAX_VALIDATION_ENTRIES);
      if (read?.ok) return { ok: true, value: read.value };
      return answer(
        malformedBodyResponse(
          `(request) must be ${text === undefined ? "UTF-8 encoded JSON" : "valid JSON"}`,
        ),
      );
    }
    const parsed = parseJsonBody(request, route.body === "optional_json" ? {} : undefined);
    return parsed.ok ? { ok: true, value: parsed.value } : answer(malformedBodyResponse(parsed.message));
  }

  /**
   * Idempotency (specification section 8, supplement D): 400 IDEMPOTENCY_KEY_PARSING, a replay of the
   * stored outcome, 409 while the first request runs, 422 after the hour. A new key is taken.
   */
  #takeIdempotencyKey(
    route: ServiceRoute,
    request: SandboxRequest,
    principal: AccessToken,
    resource: string,
    now: number,
  ): Step<{ idempotencyKey: string | undefined; scope: string | undefined }, Replay> {
    const idempotencyKey = route.idempotent ? headerValue(request, IDEMPOTENCY_HEADER) : undefined;
    if (idempotencyKey === undefined) return { ok: true, value: { idempotencyKey, scope: undefined } };
    if (!isGuid(idempotencyKey)) return answer(reasonResponse(400, "IDEMPOTENCY_KEY_PARSING"));

    const scope = IdempotencyStore.scope(principal.merchantId, request.method, resource, idempotencyKey);
    const lookup = this.#ctx.idempotency.begin(scope, now);
    switch (lookup.kind) {
      case "taken":
        return { ok: true, value: { idempotencyKey, scope } };
      case "replay":
        return { ok: false, outcome: { kind: "replay", response: lookup.response } };
      case "in_progress":
        return answer(reasonResponse(409, "IDEMPOTENCY_REQUEST_IN_PROGRESS"));
      case "expired":
        return answer(reasonResponse(422, "IDEMPOTENCY_RESPONSE_EXPIRED"));
    }
  }

  /**
   * Faults after the commit: the work is done (stored under the key, webhooks emitted), and then the
   * answer is lost (drop_after_commit), replaced by a gateway's (gateway_error after_commit), made
   * unreadable (garbled_success, 2xx only) or late (delay_after_commit).
   */
  #afterCommit(
    response: ApiResponse,
    method: string,
    path: string,
  ): SandboxOutcome | Promise<SandboxOutcome> {
    if (this.#ctx.faults.size === 0) return respond(response);
    const fault = this.#ctx.faults.take(AFTER_COMMIT_KINDS, method, path, (candidate) => {
      if (candidate.kind === "gateway_error") return candidate.phase === "after_commit";
      if (candidate.kind === "garbled_success") return response.status >= 200 && response.status < 300;
      return true;
    });
    if (fault === undefined) return respond(response);
    switch (fault.kind) {
      case "drop_after_commit":
        return DESTROY;
      case "gateway_error":
        return respond(gatewayErrorResponse(fault.status ?? 502));
      case "garbled_success":
        return respond(garbledResponse(response, fault.body ?? "garbled"));
      default:
        return this.#sleep(fault.latencyMs).then((slept) => (slept ? respond(response) : DESTROY));
    }
  }

  /** Waits out a latency fault (real time); true at once without one. False when the sandbox closed meanwhile. */
  #waitOutLatency(method: string, path: string): true | Promise<boolean> {
    const fault = this.#ctx.faults.take(LATENCY_KINDS, method, path);
    return fault === undefined || this.#sleep(fault.latencyMs);
  }

  /** Waits `ms` of real time. False when the sandbox closed meanwhile. */
  async #sleep(ms: number): Promise<boolean> {
    try {
      await sleep(ms, undefined, { signal: this.#closing.signal });
      return true;
    } catch {
      return false;
    }
  }
}

/** The token of `Authorization: Bearer <token>` (scheme in any case), or undefined. */
function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return /^bearer +(\S+) *$/i.exec(header)?.[1];
}
