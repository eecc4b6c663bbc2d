import { describe, expect, it } from "vitest";
import { RingBuffer } from "../src/core/bounded.js";
import { VirtualClock } from "../src/core/clock.js";
import { Scheduler } from "../src/core/scheduler.js";
import { type OrderRecord, orderStatus } from "../src/state/orders.js";

describe("scheduler", () => {
  it("runs jobs in due order, ties in scheduling order, and follow-ups within the same advance", () => {
    const clock = new VirtualClock();
    const scheduler = new Scheduler(clock, (error) => {
      throw error;
    });
    const ran: string[] = [];
    const start = clock.now();
    scheduler.schedule(start + 3000, "c", () => ran.push("c"));
    scheduler.schedule(start + 1000, "a", () => {
      ran.push("a");
      scheduler.schedule(clock.now() + 500, "a+500", () => ran.push("a+500"));
    });
    scheduler.schedule(start + 1000, "b", () => ran.push("b"));
    scheduler.schedule(start + 10_000, "later", () => ran.push("later"));
    scheduler.advance(5000);
    expect(ran).toEqual(["a", "b", "a+500", "c"]);
    expect(scheduler.size).toBe(1);
    scheduler.stop();
  });

  it("keeps running after a job throws", () => {
    const errors: string[] = [];
    const clock = new VirtualClock();
    const scheduler = new Scheduler(clock, (_, label) => errors.push(label));
    let ran = false;
    scheduler.schedule(clock.now(), "boom", () => {
      throw new Error("boom");
    });
    scheduler.schedule(clock.now(), "fine", () => {
      ran = true;
    });
    scheduler.runDue();
    expect([errors, ran]).toEqual([["boom"], true]);
    scheduler.stop();
  });
});

describe("ring buffer", () => {
  it("keeps the last entries, oldest first", () => {
    const buffer = new RingBuffer<number>(3);
    for (let i = 1; i <= 5; i++) buffer.push(i);
    expect(buffer.toArray()).toEqual([3, 4, 5]);
  });
});

describe("order status", () => {
  const order = (captured: number, refunded: number, cancelled: number, expired = false) =>
    ({
      totalCents: 100n,
      capturedCents: BigInt(captured),
      refundedCents: BigInt(refunded),
      cancelledCents: BigInt(cancelled),
      expired,
    }) as OrderRecord;

  it("follows from the amounts", () => {
    expect(orderStatus(order(0, 0, 0))).toBe("NotActivated");
    expect(orderStatus(order(40, 0, 0))).toBe("PartActivated");
    expect(orderStatus(order(40, 10, 0))).toBe("PartActivated");
    expect(orderStatus(order(100, 0, 0))).toBe("Activated");
    expect(orderStatus(order(40, 0, 60))).toBe("Activated");
    expect(orderStatus(order(100, 30, 0))).toBe("PartReturned");
    expect(orderStatus(order(100, 100, 0))).toBe("Returned");
    expect(orderStatus(order(0, 0, 100))).toBe("Cancelled");
    expect(orderStatus(order(0, 0, 100, true))).toBe("Expired");
  });
});
