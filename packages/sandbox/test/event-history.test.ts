import type { WebhookEvent } from "@purchase-auth/core";
import { afterEach, describe, expect, it } from "vitest";
import { RingBuffer } from "../src/core/bounded.js";
import { Simulator } from "../src/index.js";
import { type EmittedEvent, EventHistory } from "../src/webhooks/history.js";
import { accessTokenIn, authorizationBody, GUID, startReceiver, type WebhookReceiver } from "./helpers.js";

// The history of emitted events keeps compact records and builds each event once, when it is read or
// delivered: what `events()` returns must be what a ring of events built at the emit returned.

describe("EventHistory", () => {
  /** The event the history should give back for the n-th record (the builder's inputs, one per field). */
  const expected = (n: number, at: number): EmittedEvent => ({
    merchantId: `m${n % 3}`,
    event: {
      id: "",
      type: "order.captured",
      createdAt: new Date(at).toISOString(),
      data: {
        orderId: `o${n}`,
        authorizationId: `a${n}`,
        amount: `${n}.00`,
        currency: "EUR",
        status: "Activated",
      },
    } as WebhookEvent,
  });
  const build = (source: { n: number }, amount: string, status: "Activated") => ({
    orderId: `o${source.n}`,
    authorizationId: `a${source.n}`,
    amount,
    currency: "EUR",
    status,
  });
  const withoutIds = (events: EmittedEvent[]) =>
    events.map(({ merchantId, event }) => ({ merchantId, event: { ...event, id: "" } }));

  it("returns what a ring of built events returned: same order, contents and limit, read at any point", () => {
    for (const capacity of [1, 2, 3, 7, 16, 17, 40]) {
      for (const readEvery of [1, 3, 5, 1000]) {
        const history = new EventHistory(capacity);
        const ring = new RingBuffer<EmittedEvent>(capacity);
        const seen = new Map<EmittedEvent, string>();
        for (let n = 0; n < 3 * capacity + 5; n++) {
          const at = Date.UTC(2030, 0, 1) + n * 1001;
          history.record(`m${n % 3}`, "order.captured", at, build, { n }, `${n}.00`, "Activated");
          ring.push(expected(n, at));
          if (n % readEvery !== 0) continue;
          const events = history.toArray();
          expect(withoutIds(events)).toEqual(ring.toArray());
          expect(events.map(({ event }) => Object.keys(event))).toEqual(
            events.map(() => ["id", "type", "createdAt", "data"]),
          );
          // An event read again is the same object with the same id.
          for (const emitted of events) {
            expect(emitted.event.id).toMatch(GUID);
            const id = seen.get(emitted);
            if (id !== undefined) expect(emitted.event.id).toBe(id);
            seen.set(emitted, emitted.event.id);
          }
          expect(new Set(events.map(({ event }) => event.id)).size).toBe(events.length);
        }
        expect(history.length).toBe(Math.min(capacity, 3 * capacity + 5));
      }
    }
  });

  it("builds an event once, from the values recorded at the emit; clear forgets everything", () => {
    const history = new EventHistory(4);
    let builds = 0;
    const counted = (source: { n: number }, amount: string, status: "Activated") => {
      builds++;
      return build(source, amount, status);
    };
    const index = history.record("m", "order.captured", 0, counted, { n: 1 }, "1.00", "Activated");
    expect(builds).toBe(0);
    const first = history.event(index);
    expect(history.toArray()).toEqual([first]);
    expect(history.toArray()[0]).toBe(first);
    expect(builds).toBe(1);
    history.clear();
    expect(history.toArray()).toEqual([]);
    history.record("m", "order.captured", 0, counted, { n: 2 }, "2.00", "Activated");
    expect(history.toArray()[0]?.event.data).toMatchObject({ orderId: "o2" });
  });
});

describe("Simulator.events()", () => {
  let simulator: Simulator | undefined;
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    simulator?.dispose();
    await receiver?.close();
    simulator = undefined;
    receiver = undefined;
  });

  async function open(historyLimit: number) {
    const sim = new Simulator({ historyLimit });
    simulator = sim;
    const merchant = sim.createMerchant();
    const { customerToken } = sim.createCustomerToken({ merchantId: merchant.merchantId });
    const accessToken = await accessTokenIn(sim, merchant);
    const create = async (reference: string) => {
      const created = await sim.handle({
        method: "POST",
        url: "/purchase/authorizations",
        headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json" },
        body: JSON.stringify(
          authorizationBody(customerToken, {
            order: { reference, actionReference: `act-${reference}` },
            attemptSchedule: { preferSynchronous: true },
          }),
        ),
      });
      expect(created).toMatchObject({ kind: "respond", status: 200 });
    };
    return { sim, merchant, customerToken, create };
  }

  it("keeps the last historyLimit events, oldest first, with the data and time of their emit", async () => {
    const { sim, merchant, customerToken, create } = await open(5);
    for (let n = 0; n < 4; n++) {
      await create(`ref-${n}`);
      sim.advanceClock(60_000);
    }
    const events = sim.events();
    const authorizations = sim.authorizations();
    const orders = sim.orders();
    // 8 events emitted (2 per create), the last 5 kept: the second create's order.captured first.
    expect(sim.stats().webhookEvents).toBe(8);
    const all = authorizations.flatMap((auth, n) => {
      const order = orders[n]!;
      // The clock at the emit: at or after the create began, before the next create (a minute later).
      const createdAt = expect.toSatisfy(
        (at: string) =>
          Date.parse(at) >= Date.parse(auth.createdAt) &&
          Date.parse(at) < Date.parse(auth.createdAt) + 60_000,
      );
      return [
        {
          merchantId: merchant.merchantId,
          event: {
            id: expect.stringMatching(GUID),
            type: "authorization.succeeded",
            createdAt,
            data: {
              authorizationId: auth.authorizationId,
              orderId: order.orderId,
              customerToken,
              reference: `ref-${n}`,
              actionReference: `act-ref-${n}`,
              captureMode: "Auto",
              amount: "120.50",
              currency: "EUR",
            },
          },
        },
        {
          merchantId: merchant.merchantId,
          event: {
            id: expect.stringMatching(GUID),
            type: "order.captured",
            createdAt,
            data: {
              orderId: order.orderId,
              authorizationId: auth.authorizationId,
              amount: "120.50",
              currency: "EUR",
              status: "Activated",
            },
          },
        },
      ];
    });
    expect(events).toEqual(all.slice(3));
    // Same key order as events built at the emit (it is what the JSON shows).
    expect(Object.keys(events[1]!.event.data)).toEqual(Object.keys(all[0]!.event.data));
    expect(Object.keys(events[0]!.event.data)).toEqual(Object.keys(all[1]!.event.data));

    // A second read gives the same events (same ids); the control route lists them as JSON.
    expect(sim.events()).toEqual(events);
    expect(sim.events().map(({ event }) => event.id)).toEqual(events.map(({ event }) => event.id));
    const listed = await sim.handle({ method: "GET", url: "/sandbox/events", headers: {} });
    expect(listed).toMatchObject({ kind: "respond", status: 200 });
    expect(listed.kind === "respond" && JSON.parse(listed.body ?? "")).toEqual(
      JSON.parse(JSON.stringify(events)),
    );

    // Newer events push the oldest out; the ones kept keep their ids.
    await create("ref-4");
    const later = sim.events();
    expect(later.map(({ event }) => event.id).slice(0, 3)).toEqual(
      events.slice(2).map(({ event }) => event.id),
    );
    expect(later.map(({ event }) => event.type)).toEqual([
      "order.captured",
      "authorization.succeeded",
      "order.captured",
      "authorization.succeeded",
      "order.captured",
    ]);
    sim.reset();
    expect(sim.events()).toEqual([]);
  });

  it("an event's id and body are those of its webhook, read before or after the delivery", async () => {
    // 4 also bounds the deliveries queued at once: the 4 webhooks below all go out.
    const { sim, merchant, create } = await open(4);
    receiver = await startReceiver();
    await create("before-webhooks"); // no receiver yet: recorded only
    sim.setWebhooks({ merchantId: merchant.merchantId, urls: [receiver.url] });
    await create("delivered-1");
    const early = sim.events();
    await create("delivered-2");
    await sim.settle();
    const events = sim.events();
    expect(events.slice(0, 2).map(({ event }) => event.id)).toEqual(
      early.slice(2).map(({ event }) => event.id),
    );
    const delivered = receiver.received;
    expect(delivered).toHaveLength(4);
    // Deliveries about different authorizations run in parallel: matched by id, not by arrival.
    const bodies = new Map(events.map(({ event }) => [event.id, JSON.stringify(event)]));
    expect(new Set(delivered.map((webhook) => webhook.headers["service-webhook-id"]))).toEqual(
      new Set(bodies.keys()),
    );
    for (const webhook of delivered) {
      expect(webhook.rawBody).toBe(bodies.get(webhook.event.id));
      expect(webhook.headers["service-webhook-id"]).toBe(webhook.event.id);
    }
  });
});
