import { describe, expect, it } from "vitest";
import { call, charge, useShops } from "./support/shop.js";
import { readEventStream } from "./support/sse.js";

// Live updates: GET /charges/:id/events streams the charge (server-sent events) until its outcome
// is known, then says so with a last `end` event (so that the browser's EventSource can close()).

const shops = useShops();
const { shop } = shops;

describe("live updates", () => {
  it("sends the current state, then each change, and ends once the outcome is known", async () => {
    const { data, app } = await shop({
      timing: "scheduled",
      schedules: { soon: ["00.00:05:00"] },
      schedule: "soon",
    });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    const id = reply.json.authorizationId;

    const stream = await readEventStream(app, `/charges/${id}/events`, customer, async (_event, index) => {
      // Once the first (pending) state arrived, let the scheduled attempt run.
      if (index === 0) {
        shops.sandbox().advanceClock(5 * 60_000);
        await shops.sandbox().settle();
      }
    });

    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    // The charge's states, then one last `end` event: the stream ended by itself.
    const changes = stream.events.slice(0, -1);
    const end = stream.events.at(-1)!;
    expect(changes.every((event) => event.event === "charge")).toBe(true);
    const states = changes.map((event) => JSON.parse(event.data));
    expect(states[0]).toMatchObject({ authorizationId: id, status: "pending" });
    // authorization.succeeded may or may not be seen before order.captured replaces it; the last
    // state is the outcome.
    expect(states.at(-1)).toMatchObject({
      authorizationId: id,
      status: "captured",
      orderId: expect.any(String),
    });
    const versions = changes.map((event) => Number(event.id));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));

    // The `end` event carries the final state, the same as the store's, so a client can close().
    expect(end.event).toBe("end");
    expect(JSON.parse(end.data)).toEqual(states.at(-1));
    const status = await call(app, "GET", `/charges/${id}`, { customer });
    expect(JSON.parse(end.data)).toEqual(status.json);
  });

  it("ends with an `end` event for every complete checkout: authorized with manual capture, or failed", async () => {
    const { data, app } = await shop({
      allowedCaptureModes: ["Auto", "Manual"],
      allowedTimings: ["now", "scheduled"],
      schedules: { soon: ["00.00:05:00"] },
    });
    const customer = data.customer();
    const manual = await charge(app, customer, { cartId: data.cart(customer), captureMode: "Manual" });
    expect(manual.json.status).toBe("authorized");
    const authorized = await readEventStream(app, `/charges/${manual.json.authorizationId}/events`, customer);
    expect(authorized.events.map((event) => [event.event, JSON.parse(event.data).status])).toEqual([
      ["charge", "authorized"],
      ["end", "authorized"],
    ]);

    const broke = data.customer({ funds: "0.00" });
    const later = await charge(app, broke, {
      cartId: data.cart(broke),
      timing: "scheduled",
      schedule: "soon",
    });
    expect(later.json.status).toBe("pending");
    const failed = await readEventStream(
      app,
      `/charges/${later.json.authorizationId}/events`,
      broke,
      async (_, index) => {
        if (index === 0) {
          shops.sandbox().advanceClock(5 * 60_000);
          await shops.sandbox().settle();
        }
      },
    );
    const seen = failed.events.map((event) => [event.event, JSON.parse(event.data).status]);
    expect(seen[0]).toEqual(["charge", "pending"]);
    expect(seen.slice(-2)).toEqual([
      ["charge", "failed"],
      ["end", "failed"],
    ]);
    expect(JSON.parse(failed.events.at(-1)!.data)).toMatchObject({
      authorizationId: later.json.authorizationId,
      status: "failed",
      reason: "PAYMENT_METHOD_NO_FUNDS",
      message: expect.any(String),
    });
  });

  it("a charge whose outcome is known: one event, then the stream ends", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    const stream = await readEventStream(app, `/charges/${reply.json.authorizationId}/events`, customer);
    expect(stream.events.map((event) => [event.event, JSON.parse(event.data).status])).toEqual([
      ["charge", "captured"],
      ["end", "captured"],
    ]);
  });

  it("router.close() ends open streams", async () => {
    const { data, app } = await shop({
      timing: "scheduled",
      schedules: { later: ["01.00:00:00"] },
      schedule: "later",
    });
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    const stream = readEventStream(
      app,
      `/charges/${reply.json.authorizationId}/events`,
      customer,
      async () => {
        await app.router.close();
      },
    );
    // Not a complete checkout: no `end` event, so an EventSource reconnects (to another instance).
    expect((await stream).events.map((event) => [event.event, JSON.parse(event.data).status])).toEqual([
      ["charge", "pending"],
    ]);
  });
});
