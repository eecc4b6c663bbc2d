import { FifoMap } from "../core/bounded.js";
import { type StoredTime, toEpochMs, toStoredTime } from "../core/stored-time.js";
import type { ApiResponse } from "../http/types.js";

/** How long a stored outcome is replayed (specification section 8). */
export const IDEMPOTENCY_REPLAY_MS = 3600_000;
/** How long a key is remembered at all: after the replay hour it answers IDEMPOTENCY_RESPONSE_EXPIRED. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 3600_000;

/**
 * A stored outcome as one object: the answer's parts and when it was stored (a small integer). It
 * replaced an entry, the response it pointed to and a boxed epoch time: three objects per key kept,
 * for 20,000 keys. The response is put together again only for a replay.
 */
class StoredOutcome {
  constructor(
    readonly storedAt: StoredTime,
    readonly status: number,
    readonly headers: ApiResponse["headers"],
    readonly body: ApiResponse["body"],
  ) {}

  /** The response as it was completed: the same keys (absent ones absent), the same values. */
  response(): ApiResponse {
    const { status, headers, body } = this;
    if (headers === undefined) return body === undefined ? { status } : { status, body };
    return body === undefined ? { status, headers } : { status, headers, body };
  }
}

/** Every key in progress holds this one entry; `complete` replaces it. */
const IN_PROGRESS_ENTRY = Object.freeze({ state: "in_progress" as const });
type Entry = typeof IN_PROGRESS_ENTRY | StoredOutcome;
const TAKEN: IdempotencyLookup = Object.freeze({ kind: "taken" });
const IN_PROGRESS: IdempotencyLookup = Object.freeze({ kind: "in_progress" });
const EXPIRED: IdempotencyLookup = Object.freeze({ kind: "expired" });

export type IdempotencyLookup =
  /** First use: the key is now taken; finish with `complete` or `release`. */
  | { kind: "taken" }
  | { kind: "in_progress" }
  | { kind: "replay"; response: ApiResponse }
  | { kind: "expired" };

/**
 * Outcomes bound to idempotency keys. A key is scoped by merchant + method + resource (the route with
 * its ids decoded and in lower case, see `resourceOf`), so the same GUID used by two merchants, or for
 * two different orders, never collides, while every spelling of one order's path is one scope.
 *
 * Entries are kept in insertion order, which is (close to) storage order, so expired ones are dropped
 * from the front as new keys arrive: memory stays bounded without scanning history.
 */
export class IdempotencyStore {
  readonly #entries = new FifoMap<string, Entry>();
  readonly #maxKeys: number;

  constructor(maxKeys: number) {
    this.#maxKeys = maxKeys;
  }

  static scope(merchantId: string, method: string, resource: string, key: string): string {
    // join makes one flat string; a template literal leaves a tree of concatenations behind every key
    // kept (thousands), which the garbage collector copies and every lookup walks.
    return [merchantId, method, resource, key.toLowerCase()].join(" ");
  }

  /** Looks the key up; when it is new, takes it (in progress). */
  begin(scope: string, now: number): IdempotencyLookup {
    this.#dropForgotten(now);
    const entry = this.#entries.get(scope);
    if (entry === undefined) {
      this.#entries.add(scope, IN_PROGRESS_ENTRY); // just looked up: new
      if (this.#entries.size > this.#maxKeys) this.#dropOldest();
      return TAKEN;
    }
    if (!(entry instanceof StoredOutcome)) return IN_PROGRESS;
    if (now - toEpochMs(entry.storedAt) > IDEMPOTENCY_REPLAY_MS) return EXPIRED;
    return { kind: "replay", response: entry.response() };
  }

  /**
   * Binds the key to the outcome when it is one a retry must see again (2xx, 400, 404, 422); any other
   * outcome (401, 409, 413, 415, 5xx) releases the key so a retry really runs again.
   */
  complete(scope: string, response: ApiResponse, now: number): void {
    const { status, headers, body } = response;
    if (!isStorable(status)) {
      this.#entries.delete(scope);
      return;
    }
    this.#entries.set(scope, new StoredOutcome(toStoredTime(now), status, headers, body));
  }

  release(scope: string): void {
    this.#entries.delete(scope);
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }

  #dropForgotten(now: number): void {
    this.#walkNow = now;
    this.#entries.walkFromOldest(this.#forgetIfOld);
  }

  /** The `now` of the walk in progress. */
  #walkNow = 0;
  /** One callback for every walk (no closure per request): in-progress keys are passed over. */
  readonly #forgetIfOld = (entry: Entry, scope: string): boolean => {
    if (!(entry instanceof StoredOutcome)) return true; // in progress
    if (this.#walkNow - toEpochMs(entry.storedAt) < IDEMPOTENCY_RETENTION_MS) return false;
    this.#entries.delete(scope);
    return true;
  };

  #dropOldest(): void {
    this.#entries.evictBeyond(this.#entries.size - 1);
  }
}

function isStorable(status: number): boolean {
  return (status >= 200 && status < 300) || status === 400 || status === 404 || status === 422;
}
