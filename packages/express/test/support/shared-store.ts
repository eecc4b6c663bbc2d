import type { ChargeRecord, MemoryChargeStore } from "../../src/index.js";
import type { ChargeStore, PendingCursor, StoredWebhookEvent } from "../../src/stores/types.js";

// Two app instances sharing one store, each with its own latency: a test holds one instance at a
// store call until the other has done something (causal, no sleeps).

/** A promise the test opens when it wants. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

export interface Hooks {
  afterCreate?: (result: { charge: ChargeRecord; created: boolean }) => Promise<void>;
  afterFindByAuthorizationId?: (id: string, found: ChargeRecord | undefined) => Promise<void>;
  beforeCompareAndSet?: (next: ChargeRecord) => Promise<void>;
  afterCompareAndSet?: (saved: ChargeRecord | undefined) => void;
  beforeUnappliedEvents?: (id: string) => Promise<void>;
  afterMarkEventApplied?: (id: string) => void;
}

/** One app instance's view of a store shared with another instance: the same data, its own latency. */
export class InstanceView implements ChargeStore {
  constructor(
    readonly shared: MemoryChargeStore,
    readonly hooks: Hooks = {},
  ) {}
  async create(charge: ChargeRecord) {
    const result = await this.shared.create(charge);
    await this.hooks.afterCreate?.(result);
    return result;
  }
  findByReference(reference: string) {
    return this.shared.findByReference(reference);
  }
  async findByAuthorizationId(id: string) {
    const found = await this.shared.findByAuthorizationId(id);
    await this.hooks.afterFindByAuthorizationId?.(id, found);
    return found;
  }
  async compareAndSet(expectedVersion: number, next: ChargeRecord) {
    await this.hooks.beforeCompareAndSet?.(next);
    const saved = await this.shared.compareAndSet(expectedVersion, next);
    this.hooks.afterCompareAndSet?.(saved);
    return saved;
  }
  recordEvent(stored: StoredWebhookEvent) {
    return this.shared.recordEvent(stored);
  }
  async markEventApplied(id: string) {
    await this.shared.markEventApplied(id);
    this.hooks.afterMarkEventApplied?.(id);
  }
  async unappliedEvents(id: string) {
    await this.hooks.beforeUnappliedEvents?.(id);
    return this.shared.unappliedEvents(id);
  }
  listPending(limit: number, after?: PendingCursor) {
    return this.shared.listPending(limit, after);
  }
  listUnanswered(limit: number, after?: PendingCursor) {
    return this.shared.listUnanswered(limit, after);
  }
  listWithUnappliedEvents(limit: number, after?: string) {
    return this.shared.listWithUnappliedEvents(limit, after);
  }
  listSentWrites(limit: number, after?: PendingCursor) {
    return this.shared.listSentWrites(limit, after);
  }
}
