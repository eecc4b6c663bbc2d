import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { RateLimitWaitAbortedError, rateLimiter } from "../src/runners/rate-limiter.js";

// The rate limiter on a fake clock (no real time passes): starts are evenly spaced, in arrival
// order, and a wait that its signal ends leaves the line without taking a slot.

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

it("a wait cut by its own signal takes no slot: the next in line moves up, still evenly spaced", async () => {
  const limit = rateLimiter(10); // one start every 100 ms
  const t0 = performance.now();
  const starts: Array<[string, number]> = [];
  const start = (name: string, signal?: AbortSignal) =>
    limit(signal).then(() => {
      starts.push([name, performance.now() - t0]);
    });

  const deadlineOfC = new AbortController();
  const [a, b, c, d] = [start("a"), start("b"), start("c", deadlineOfC.signal), start("d")];
  await vi.advanceTimersByTimeAsync(150);
  deadlineOfC.abort(); // c's deadline, while it waits for its slot (at 200 ms)
  await expect(c).rejects.toBeInstanceOf(RateLimitWaitAbortedError);
  await vi.advanceTimersByTimeAsync(100);
  const e = start("e"); // at 250 ms: the next free slot is at 300 ms, not earlier
  await vi.advanceTimersByTimeAsync(100);
  await Promise.all([a, b, d, e]);

  expect(starts).toEqual([
    ["a", 0],
    ["b", 100],
    ["d", 200],
    ["e", 300],
  ]);
});

it("the limiter's own signal ends every wait and refuses later calls, as an AbortError", async () => {
  const stop = new AbortController();
  const limit = rateLimiter(10, stop.signal);
  await limit(); // the first slot is free
  const waiting = [limit(), limit(new AbortController().signal)];
  const ended = Promise.all(
    waiting.map((wait) => expect(wait).rejects.toBeInstanceOf(RateLimitWaitAbortedError)),
  );
  stop.abort();
  await ended;
  await expect(limit()).rejects.toMatchObject({ name: "AbortError" });
  // Nothing is left to fire.
  expect(vi.getTimerCount()).toBe(0);
});
