import type { CaptureMode } from "@purchase-auth/core";
import { FifoMap } from "../core/bounded.js";
import type { StoredTime } from "../core/stored-time.js";
import type { AttemptPlan } from "../domain/attempt-plan.js";
import type { CompactList } from "./compact-list.js";
import type { ItemsText } from "./items-text.js";

export type AuthorizationStatus = "Scheduled" | "Succeeded" | "Failed";

/** One attempt to perform an authorization. */
export interface AttemptRecord {
  readonly authorizationId: string;
  readonly merchantId: string;
  /** 1-based. */
  readonly attempt: number;
  /** Virtual time it ran (ISO 8601). */
  readonly at: string;
  readonly outcome: "succeeded" | "failed";
  readonly reason?: string;
  /** Ran inside the HTTP call (preferSynchronous). */
  readonly synchronous: boolean;
}

export interface AuthorizationRecord {
  readonly authorizationId: string;
  readonly merchantId: string;
  readonly clientId: string;
  readonly customerToken: string;
  readonly storeId: string;
  readonly currency: string;
  readonly totalCents: bigint;
  readonly captureMode: CaptureMode;
  readonly reference: string | undefined;
  readonly actionReference: string | undefined;
  readonly settlementReference: string | undefined;
  /** Kept for the order a successful attempt creates. */
  readonly items: ItemsText;
  readonly idempotencyKey: string | undefined;
  readonly plan: AttemptPlan;
  readonly maxAttempts: number;
  readonly createdAt: StoredTime;
  status: AuthorizationStatus;
  attempts: CompactList<AttemptRecord>;
  /** Virtual time of the next scheduled attempt while Scheduled. */
  nextAttemptAt: number | undefined;
  orderId: string | undefined;
  failureReason: string | undefined;
}

/** Authorizations by id, the oldest forgotten beyond `maxStoredObjects` (a late attempt of one is dropped). */
export class AuthorizationStore {
  readonly #records = new FifoMap<string, AuthorizationRecord>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  add(record: AuthorizationRecord): AuthorizationRecord {
    this.#records.add(record.authorizationId, record); // a fresh GUID
    this.#records.evictBeyond(this.#max);
    return record;
  }

  get(authorizationId: string): AuthorizationRecord | undefined {
    return this.#records.get(authorizationId);
  }

  list(): AuthorizationRecord[] {
    return [...this.#records.values()];
  }

  clear(): void {
    this.#records.clear();
  }
}
