import { newGuid } from "./core/ids.js";
import { SeededRandom } from "./core/prng.js";

/**
 * The failures a test can inject (never applied to the /sandbox control routes):
 * - `unavailable`: 503 SERVICE_UNAVAILABLE before any processing;
 * - `reset_before_processing`: the connection is destroyed before any processing;
 * - `drop_after_commit`: fully processed (and the idempotent outcome stored), then the connection is
 *   destroyed without an answer;
 * - `latency`: waits `latencyMs` (real time) after the idempotency key is taken, then processes;
 * - `in_progress`: 409 IDEMPOTENCY_REQUEST_IN_PROGRESS without processing (write routes only);
 * - `token_endpoint_down`: the token endpoint answers 503 `{ error: "temporarily_unavailable" }`;
 * - `revoke_access_token`: the presented bearer token is revoked just before the check (→ 401);
 * - `gateway_error`: a gateway's answer (`status` 500, 502 or 504, an HTML body, not the envelope),
 *   `phase` before_commit (nothing processed) or after_commit (processed and stored, webhooks sent);
 * - `rate_limited`: 429 with `Retry-After: retryAfterSeconds` (default 1), nothing processed;
 * - `garbled_success`: processed and committed, then the real 2xx status with an empty (`body:
 *   "empty"`) or unreadable (`body: "garbled"`) body; fires on 2xx answers only;
 * - `delay_after_commit`: processed, committed, webhooks sent, then the answer waits `latencyMs`
 *   (real time), so the webhook arrives before the answer.
 */
export const FAULT_KINDS = [
  "unavailable",
  "reset_before_processing",
  "drop_after_commit",
  "latency",
  "in_progress",
  "token_endpoint_down",
  "revoke_access_token",
  "gateway_error",
  "rate_limited",
  "garbled_success",
  "delay_after_commit",
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export const GATEWAY_STATUSES = [500, 502, 504] as const;
export type GatewayStatus = (typeof GATEWAY_STATUSES)[number];
export const FAULT_PHASES = ["before_commit", "after_commit"] as const;
export type FaultPhase = (typeof FAULT_PHASES)[number];
export const GARBLED_BODIES = ["empty", "garbled"] as const;
export type GarbledBody = (typeof GARBLED_BODIES)[number];

export interface FaultSpec {
  kind: FaultKind;
  /** Which requests: method (any case) and a path prefix. Omitted = every service request. */
  match?: { method?: string; path?: string };
  /**
   * How many times it fires. Default 1, or unlimited when `probability` is given; null or Infinity =
   * unlimited.
   */
  count?: number | null;
  /** Chance (0..1) that a matching request is hit; default 1. Drawn from the seeded generator. */
  probability?: number;
  /** For `latency` (default 1000) and `delay_after_commit` (required): real milliseconds to wait. */
  latencyMs?: number;
  /** For `gateway_error` (required): the gateway's status. */
  status?: GatewayStatus;
  /** For `gateway_error` (required): answered before any processing, or after the commit. */
  phase?: FaultPhase;
  /** For `rate_limited`: the `Retry-After` header in whole seconds; default 1. */
  retryAfterSeconds?: number;
  /** For `garbled_success` (required): an empty body or one that is not the envelope. */
  body?: GarbledBody;
}

/** An injected fault as listed by `faults()`; `remaining` null = unlimited. */
export interface FaultView {
  faultId: string;
  kind: FaultKind;
  match: { method?: string; path?: string };
  remaining: number | null;
  probability: number;
  latencyMs: number;
  fired: number;
  /** gateway_error only. */
  status?: GatewayStatus;
  /** gateway_error only. */
  phase?: FaultPhase;
  /** rate_limited only. */
  retryAfterSeconds?: number;
  /** garbled_success only. */
  body?: GarbledBody;
}

interface ActiveFault {
  readonly faultId: string;
  readonly kind: FaultKind;
  readonly method: string | undefined;
  readonly pathPrefix: string | undefined;
  remaining: number;
  readonly probability: number;
  readonly latencyMs: number;
  readonly extra: Pick<FaultView, "status" | "phase" | "retryAfterSeconds" | "body">;
  fired: number;
}

/** How many faults can be active at once; `take` walks them on every request. */
export const MAX_ACTIVE_FAULTS = 1000;

export class FaultInjector {
  #faults: ActiveFault[] = [];
  #random: SeededRandom;
  readonly #seed: number;

  constructor(seed: number) {
    this.#seed = seed;
    this.#random = new SeededRandom(seed);
  }

  get size(): number {
    return this.#faults.length;
  }

  /** Validated by the caller (control input); returns the fault id. */
  inject(spec: FaultSpec): string {
    const probability = spec.probability ?? 1;
    const unlimited = spec.count === null || (spec.count === undefined && spec.probability !== undefined);
    const fault: ActiveFault = {
      faultId: newGuid(),
      kind: spec.kind,
      method: spec.match?.method?.toUpperCase(),
      pathPrefix: spec.match?.path,
      remaining: unlimited ? Number.POSITIVE_INFINITY : (spec.count ?? 1),
      probability,
      latencyMs: spec.latencyMs ?? 1000,
      extra: {
        ...(spec.status === undefined ? {} : { status: spec.status }),
        ...(spec.phase === undefined ? {} : { phase: spec.phase }),
        ...(spec.kind === "rate_limited" ? { retryAfterSeconds: spec.retryAfterSeconds ?? 1 } : {}),
        ...(spec.body === undefined ? {} : { body: spec.body }),
      },
      fired: 0,
    };
    this.#faults.push(fault);
    return fault.faultId;
  }

  /**
   * The first active fault of one of `kinds` that matches the request, passes `accept` and wins its
   * draw; it is consumed. O(number of injected faults), which is zero on a benchmark.
   */
  take(
    kinds: readonly FaultKind[],
    method: string,
    path: string,
    accept?: (fault: FaultView) => boolean,
  ): FaultView | undefined {
    if (this.#faults.length === 0) return undefined;
    for (const fault of this.#faults) {
      if (!kinds.includes(fault.kind)) continue;
      if (fault.method !== undefined && fault.method !== method) continue;
      if (fault.pathPrefix !== undefined && !path.startsWith(fault.pathPrefix)) continue;
      if (accept !== undefined && !accept(view(fault))) continue;
      if (fault.probability < 1 && this.#random.next() >= fault.probability) continue;
      fault.fired++;
      fault.remaining--;
      if (fault.remaining <= 0) this.#faults = this.#faults.filter((other) => other !== fault);
      return view(fault);
    }
    return undefined;
  }

  list(): FaultView[] {
    return this.#faults.map(view);
  }

  clear(): void {
    this.#faults = [];
  }

  /** Clears faults and restarts the random sequence from the seed. */
  reset(): void {
    this.clear();
    this.#random = new SeededRandom(this.#seed);
  }
}

function view(fault: ActiveFault): FaultView {
  return {
    faultId: fault.faultId,
    kind: fault.kind,
    match: {
      ...(fault.method === undefined ? {} : { method: fault.method }),
      ...(fault.pathPrefix === undefined ? {} : { path: fault.pathPrefix }),
    },
    remaining: Number.isFinite(fault.remaining) ? fault.remaining : null,
    probability: fault.probability,
    latencyMs: fault.latencyMs,
    fired: fault.fired,
    ...fault.extra,
  };
}
