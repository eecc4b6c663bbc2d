import { describe, expect, it } from "vitest";
import { charge, useShops } from "./support/shop.js";
import { readEventStream } from "./support/sse.js";

// Live updates: GET /charges/:id/events streams the charge (server-sent events) until its outcome
// is known.

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
    const states = stream.events.map((event) => JSON.parse(event.data));
    expect(stream.events.every((event) => event.event === "charge")).toBe(true);
    expect(states[0]).toMatchObject({ authorizationId: id, status: "pending" });
    // authorization.succeeded may or may not be seen before order.captured replaces it; the last
    // state is the outcome, and the stream ended by itself.
    expect(states.at(-1)).toMatchObject({
      authorizationId: id,
      status: "captured",
      orderId: expect.any(String),
    });
    const versions = stream.events.map((event) => Number(event.id));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
  });

  it("a charge whose outcome is known: one event, then the stream ends", async () => {
    const { data, app } = await shop();
    const customer = data.customer();
    const reply = await charge(app, customer, { cartId: data.cart(customer) });
    const stream = await readEventStream(app, `/charges/${reply.json.authorizationId}/events`, customer);
    expect(stream.events.map((event) => JSON.parse(event.data).status)).toEqual(["captured"]);
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
    expect((await stream).events.map((event) => JSON.parse(event.data).status)).toEqual(["pending"]);
  });
});
