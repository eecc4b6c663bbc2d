import type { WebhookEvent, WebhookEventOf, WebhookEventType } from "@purchase-auth/core";
import { newGuid } from "../core/ids.js";

/** An emitted event with the merchant it belongs to. */
export interface EmittedEvent {
  merchantId: string;
  event: WebhookEvent;
}

/**
 * Builds an event's data from what was recorded when it was emitted. It must read only values that
 * never change afterwards (an order's status, say, is recorded, not read from the order), so the
 * data built at any later moment is the data of the moment the event was emitted.
 */
export type EventDataBuilder<T extends WebhookEventType, S, A, B> = (
  source: S,
  a: A,
  b: B,
) => WebhookEventOf<T>["data"];

/** Values kept per event in `#slots`, one after the other. */
const STRIDE = 7;
const MERCHANT = 0;
const TYPE = 1;
const BUILD = 2;
const SOURCE = 3;
const A = 4;
const B = 5;
/** The event once built (read or delivered); from then on it is the event. */
const BUILT = 6;

type AnyBuilder = (source: unknown, a: unknown, b: unknown) => WebhookEvent["data"];

/**
 * The last `capacity` events emitted (what `events()` returns), oldest first.
 *
 * An event is kept as a few references in one flat array (its merchant, type, a builder function
 * and the values the builder needs, mostly records the stores keep anyway) and its virtual time in
 * a Float64Array: recording one allocates nothing. A kept event object (wrapper, event, data, id and
 * amount strings, ~250 bytes) lived just long enough to be copied by the garbage collector's
 * scavenges and promoted, for every event of every create. The event object, and its id, are built
 * when something reads it or delivers it, once: later reads and deliveries get the same object.
 */
export class EventHistory {
  readonly #capacity: number;
  #slots: unknown[] = [];
  #times = new Float64Array(16);
  /** Events held (up to the capacity). */
  #length = 0;
  /** Index of the oldest event once full. */
  #start = 0;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, Math.floor(capacity));
  }

  get length(): number {
    return this.#length;
  }

  /** Records an event; returns its handle for `event` (valid until `capacity` more are recorded). */
  record<T extends WebhookEventType, S, A, B>(
    merchantId: string,
    type: T,
    at: number,
    build: EventDataBuilder<T, S, A, B>,
    source: S,
    a: A,
    b: B,
  ): number {
    let index: number;
    if (this.#length < this.#capacity) {
      index = this.#length++;
      if (index === this.#times.length) this.#grow();
    } else {
      index = this.#start;
      this.#start = this.#start + 1 === this.#capacity ? 0 : this.#start + 1;
    }
    const slots = this.#slots;
    const base = index * STRIDE;
    slots[base + MERCHANT] = merchantId;
    slots[base + TYPE] = type;
    slots[base + BUILD] = build;
    slots[base + SOURCE] = source;
    slots[base + A] = a;
    slots[base + B] = b;
    slots[base + BUILT] = undefined;
    this.#times[index] = at;
    return index;
  }

  /** The event recorded at `index`, built on first use. */
  event(index: number): EmittedEvent {
    const slots = this.#slots;
    const base = index * STRIDE;
    const built = slots[base + BUILT] as EmittedEvent | undefined;
    if (built !== undefined) return built;
    const build = slots[base + BUILD] as AnyBuilder;
    const event = {
      id: newGuid(),
      type: slots[base + TYPE],
      createdAt: new Date(this.#times[index]!).toISOString(),
      data: build(slots[base + SOURCE], slots[base + A], slots[base + B]),
    } as WebhookEvent;
    const emitted: EmittedEvent = { merchantId: slots[base + MERCHANT] as string, event };
    // Built once: the inputs are no longer needed.
    slots[base + BUILD] = undefined;
    slots[base + SOURCE] = undefined;
    slots[base + A] = undefined;
    slots[base + B] = undefined;
    slots[base + BUILT] = emitted;
    return emitted;
  }

  /** Oldest first. */
  toArray(): EmittedEvent[] {
    const events: EmittedEvent[] = [];
    for (let n = 0; n < this.#length; n++) {
      const index = this.#start + n;
      events.push(this.event(index < this.#capacity ? index : index - this.#capacity));
    }
    return events;
  }

  clear(): void {
    this.#slots = [];
    this.#times = new Float64Array(16);
    this.#length = 0;
    this.#start = 0;
  }

  #grow(): void {
    const times = new Float64Array(Math.min(this.#times.length * 2, this.#capacity));
    times.set(this.#times);
    this.#times = times;
  }
}

/** The data of an event emitted with its data at hand. */
export function givenData<T extends WebhookEventType>(
  data: WebhookEventOf<T>["data"],
): WebhookEventOf<T>["data"] {
  return data;
}
