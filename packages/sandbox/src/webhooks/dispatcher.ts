import {
  DEFAULT_HEADERS,
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
} from "@purchase-auth/core";
import { clampToVirtualRange } from "../control/limits.js";
import { RingBuffer } from "../core/bounded.js";
import type { VirtualClock } from "../core/clock.js";
import type { Scheduler } from "../core/scheduler.js";
import { type EmittedEvent, type EventDataBuilder, EventHistory, givenData } from "./history.js";
import { DeliveryLane } from "./lane.js";
import { WebhookPoster } from "./post.js";
import { signatureHeader } from "./signing.js";

/** Switches that make delivery as unreliable as the supplement allows. */
export interface WebhookDeliverySettings {
  /** Every delivery is sent twice, back to back (same event id). */
  duplicate: boolean;
  /** Each batch of events (see README) is delivered newest first. */
  outOfOrder: boolean;
}

/** One HTTP POST of an event to a receiver. */
export interface WebhookDeliveryRecord {
  eventId: string;
  type: WebhookEventType;
  merchantId: string;
  url: string;
  /** 1 for the first delivery, 2 for the first redelivery, … */
  attempt: number;
  /** 1, or 2 for the second copy when `duplicate` is on. */
  copy: number;
  /** HTTP status of the answer; null when there was none (refused, reset, timeout). */
  statusCode: number | null;
  error?: string;
  /**
   * delivered: 2xx; failed: redelivery scheduled at `nextAttemptAt`; gave_up: failed and no
   * redelivery left; dropped: never sent because too many deliveries were queued.
   */
  outcome: "delivered" | "failed" | "gave_up" | "dropped";
  /** Virtual time of the POST (ISO 8601). */
  at: string;
  nextAttemptAt?: string;
}

export type { EmittedEvent } from "./history.js";

interface Delivery {
  readonly event: WebhookEvent;
  readonly rawBody: string;
  readonly merchantId: string;
  readonly url: string;
  readonly attempt: number;
  /** Deliveries about the same resource go one at a time (see DeliveryLane). */
  readonly orderKey: string;
}

export interface WebhookDispatcherDeps {
  clock: VirtualClock;
  scheduler: Scheduler;
  /** The merchant's current webhook configuration (secrets are read at send time, for rotation). */
  webhooksOf: (merchantId: string) => { urls: readonly string[]; secrets: readonly string[] } | undefined;
  timeoutMs: number;
  /** Deliveries in flight per receiver URL at most. */
  concurrency: number;
  retryDelaysMs: readonly number[];
  historyLimit: number;
}

/**
 * At-least-once delivery of webhook events (supplement C).
 *
 * Events emitted during one turn of the event loop (one HTTP request, one clock advance, one timer
 * run) form a batch. The batch is flushed on the next turn into one lane per receiver URL, oldest
 * first, or newest first with `outOfOrder`. Each URL gets up to `concurrency` deliveries in flight,
 * started in lane order; the deliveries about one resource (an authorization and its order, or a
 * customer token) go one at a time, so parallelism never reorders them. A delivery without a 2xx answer (within `timeoutMs`) is redelivered after the next delay of
 * `retryDelaysMs` on the virtual clock, as part of the batch of that moment; after the last delay
 * it is given up and recorded so.
 */
export class WebhookDispatcher {
  readonly #deps: WebhookDispatcherDeps;
  readonly #events: EventHistory;
  readonly #deliveries: RingBuffer<WebhookDeliveryRecord>;
  #settings: WebhookDeliverySettings = { duplicate: false, outOfOrder: false };
  #batch: Delivery[] = [];
  #flushScheduled = false;
  #lanes = new Map<string, DeliveryLane<Delivery>>();
  /** Deliveries waiting in the batch or in a lane, not started yet. */
  #queued = 0;
  #inFlight = 0;
  #idleWaiters: Array<() => void> = [];
  /** Bumped by reset/close: work of an older generation stops and records nothing. */
  #generation = 0;
  /** One per POST in flight, aborted by reset (not listeners on one shared signal: 16+ would warn). */
  #posts = new Set<AbortController>();
  readonly #poster = new WebhookPoster();
  #closed = false;
  #sent = 0;
  #emitted = 0;

  constructor(deps: WebhookDispatcherDeps) {
    this.#deps = deps;
    this.#events = new EventHistory(deps.historyLimit);
    this.#deliveries = new RingBuffer(deps.historyLimit);
  }

  get settings(): WebhookDeliverySettings {
    return { ...this.#settings };
  }

  configure(settings: Partial<WebhookDeliverySettings>): WebhookDeliverySettings {
    this.#settings = { ...this.#settings, ...settings };
    return this.settings;
  }

  /** Records an event and queues it for every URL of the merchant. */
  emit<T extends WebhookEventType>(merchantId: string, type: T, data: WebhookEventOf<T>["data"]): void {
    this.emitWith(merchantId, type, givenData<T>, data, undefined, undefined);
  }

  /**
   * `emit` with the data built by `build(source, a, b)` when the event is read or delivered (see
   * EventHistory): `build` must read only values that do not change after this call. `at`: the
   * virtual time of the event when the caller has read the clock already, else now.
   */
  emitWith<T extends WebhookEventType, S, A, B>(
    merchantId: string,
    type: T,
    build: EventDataBuilder<T, S, A, B>,
    source: S,
    a: A,
    b: B,
    at?: number,
  ): void {
    const index = this.#events.record(merchantId, type, at ?? this.#deps.clock.now(), build, source, a, b);
    this.#emitted++;
    const urls = this.#deps.webhooksOf(merchantId)?.urls ?? [];
    if (urls.length === 0) return;
    const { event } = this.#events.event(index);
    const rawBody = JSON.stringify(event);
    const orderKey = `${merchantId} ${orderKeyOf(event)}`;
    for (const url of urls) this.#enqueue({ event, rawBody, merchantId, url, attempt: 1, orderKey });
  }

  /** Moves the current batch into the per-URL lanes, which start what they may at once. */
  flush(): void {
    this.#flushScheduled = false;
    if (this.#closed || this.#batch.length === 0) return;
    const batch = this.#settings.outOfOrder ? this.#batch.reverse() : this.#batch;
    this.#batch = [];
    for (const delivery of batch) this.#laneOf(delivery.url).push(delivery);
  }

  /** Nothing waiting to be flushed and no delivery queued or in flight. */
  isIdle(): boolean {
    return this.#batch.length === 0 && this.#queued === 0 && this.#inFlight === 0;
  }

  /** Resolves once idle (flushing the current batch first). */
  whenIdle(): Promise<void> {
    this.flush();
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  events(): EmittedEvent[] {
    return this.#events.toArray();
  }

  deliveries(): WebhookDeliveryRecord[] {
    return this.#deliveries.toArray();
  }

  /** Total events emitted. */
  get emittedCount(): number {
    return this.#emitted;
  }

  /** Total POSTs made (all copies and redeliveries). */
  get sentCount(): number {
    return this.#sent;
  }

  /** Forgets everything and aborts deliveries in flight. */
  reset(): void {
    this.#generation++;
    for (const post of this.#posts) post.abort(new DOMException("The sandbox was reset", "AbortError"));
    this.#posts.clear();
    this.#batch = [];
    for (const lane of this.#lanes.values()) lane.clear();
    this.#lanes = new Map();
    this.#queued = 0;
    this.#events.clear();
    this.#deliveries.clear();
    this.#settings = { duplicate: false, outOfOrder: false };
    this.#sent = 0;
    this.#emitted = 0;
    this.#notifyIfIdle();
  }

  close(): void {
    this.#closed = true;
    this.reset();
    this.#poster.destroy();
  }

  #enqueue(delivery: Delivery): void {
    if (this.#closed) return;
    if (this.#queued >= this.#deps.historyLimit) {
      this.#record(delivery, 1, { statusCode: null, error: "too many deliveries queued" }, "dropped");
      return;
    }
    this.#queued++;
    this.#batch.push(delivery);
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  #laneOf(url: string): DeliveryLane<Delivery> {
    let lane = this.#lanes.get(url);
    if (lane === undefined) {
      const generation = this.#generation;
      const created: DeliveryLane<Delivery> = new DeliveryLane(
        this.#deps.concurrency,
        (delivery) => this.#start(delivery, generation),
        // An idle lane is forgotten, so lanes do not pile up for URLs that are no longer used.
        () => {
          if (this.#lanes.get(url) === created) this.#lanes.delete(url);
        },
      );
      lane = created;
      this.#lanes.set(url, lane);
    }
    return lane;
  }

  /** One delivery taken from its lane; never rejects (the lane only counts). */
  async #start(delivery: Delivery, generation: number): Promise<void> {
    if (generation !== this.#generation) return; // a lane cleared by reset
    this.#queued--;
    this.#inFlight++;
    try {
      await this.#deliver(delivery, generation);
    } catch (error) {
      console.error("[purchase-auth-sandbox] webhook delivery failed:", error);
    } finally {
      this.#inFlight--;
      this.#notifyIfIdle();
    }
  }

  async #deliver(delivery: Delivery, generation: number): Promise<void> {
    const copies = this.#settings.duplicate ? 2 : 1;
    const retryDelay = this.#deps.retryDelaysMs[delivery.attempt - 1];
    let delivered = false;
    for (let copy = 1; copy <= copies; copy++) {
      const secrets = this.#deps.webhooksOf(delivery.merchantId)?.secrets;
      if (secrets === undefined) return; // the merchant is gone (reset)
      const result = await this.#post(delivery, secrets);
      if (generation !== this.#generation) return;
      const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      delivered ||= ok;
      const last = copy === copies;
      if (ok || !last || delivered) {
        this.#record(delivery, copy, result, ok ? "delivered" : "failed");
      } else if (retryDelay === undefined) {
        this.#record(delivery, copy, result, "gave_up");
      } else {
        // One reading of the clock for both, so the record shows the delay exactly.
        const at = this.#deps.clock.now();
        const nextAttemptAt = clampToVirtualRange(at + retryDelay);
        this.#record(delivery, copy, result, "failed", nextAttemptAt, at);
        this.#deps.scheduler.schedule(nextAttemptAt, "webhook redelivery", () => {
          if (generation === this.#generation) this.#enqueue({ ...delivery, attempt: delivery.attempt + 1 });
        });
      }
    }
  }

  async #post(
    delivery: Delivery,
    secrets: readonly string[],
  ): Promise<{ statusCode: number | null; error?: string }> {
    // The timestamp is real wall-clock time, so a receiver can check it against its own clock.
    const timestamp = String(Math.floor(Date.now() / 1000));
    this.#sent++;
    // One controller and one timer, cleared when the delivery ends. AbortSignal.any over an
    // AbortSignal.timeout can lose the timeout to garbage collection on Node 20, and a delivery to
    // a receiver that never answers then hangs for good.
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new DOMException("The delivery timed out", "TimeoutError")),
      this.#deps.timeoutMs,
    );
    this.#posts.add(controller);
    try {
      const headers = {
        "content-type": "application/json",
        "user-agent": "purchase-auth-sandbox",
        [DEFAULT_HEADERS.webhookId]: delivery.event.id,
        [DEFAULT_HEADERS.webhookTimestamp]: timestamp,
        [DEFAULT_HEADERS.webhookSignature]: signatureHeader(secrets, timestamp, delivery.rawBody),
      };
      const statusCode = await this.#poster.post(delivery.url, headers, delivery.rawBody, controller.signal);
      return { statusCode };
    } catch (error) {
      return { statusCode: null, error: describeError(error) };
    } finally {
      clearTimeout(timer);
      this.#posts.delete(controller);
    }
  }

  #record(
    delivery: Delivery,
    copy: number,
    result: { statusCode: number | null; error?: string },
    outcome: WebhookDeliveryRecord["outcome"],
    nextAttemptAt?: number,
    at = this.#deps.clock.now(),
  ): void {
    this.#deliveries.push({
      eventId: delivery.event.id,
      type: delivery.event.type,
      merchantId: delivery.merchantId,
      url: delivery.url,
      attempt: delivery.attempt,
      copy,
      statusCode: result.statusCode,
      ...(result.error === undefined ? {} : { error: result.error }),
      outcome,
      at: new Date(at).toISOString(),
      ...(nextAttemptAt === undefined ? {} : { nextAttemptAt: new Date(nextAttemptAt).toISOString() }),
    });
  }

  #notifyIfIdle(): void {
    if (!this.isIdle() || this.#idleWaiters.length === 0) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** The resource an event is about: its deliveries must not overtake each other. */
function orderKeyOf(event: WebhookEvent): string {
  const data = event.data as { authorizationId?: string; customerToken?: string };
  return data.authorizationId ?? data.customerToken ?? event.id;
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}
