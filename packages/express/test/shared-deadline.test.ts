import { afterEach, describe, expect, it, vi } from "vitest";
import { SharedDeadline } from "../src/http/shared-deadline.js";

// The create calls' `timeoutMs`: calls running at the same time share one signal, and no call is
// ever given more than `timeoutMs`.

afterEach(() => {
  vi.useRealTimers();
});

const aborted = (signal: AbortSignal) => signal.aborted;

describe("SharedDeadline", () => {
  it("lets calls running together share a signal, and clears its timer when the last one ends", () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(20_000);
    const first = deadline.acquire();
    const second = deadline.acquire();
    expect(second.signal).toBe(first.signal);
    expect(vi.getTimerCount()).toBe(1);
    deadline.release(first);
    expect(vi.getTimerCount()).toBe(1);
    deadline.release(second);
    expect(vi.getTimerCount()).toBe(0);
    // Nobody holds it any more: the next call gets a signal (and a full timeout) of its own.
    const third = deadline.acquire();
    expect(third.signal).not.toBe(first.signal);
    deadline.release(third);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("aborts with a TimeoutError after the timeout, as AbortSignal.timeout does", () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(20_000);
    const { signal } = deadline.acquire();
    vi.advanceTimersByTime(19_999);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toMatchObject({ name: "TimeoutError" });
    // An expired signal is never handed out again.
    expect(deadline.acquire().signal.aborted).toBe(false);
  });

  it("gives a call that starts more than 1% of the timeout later a signal of its own", () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(20_000);
    const early = deadline.acquire();
    vi.advanceTimersByTime(99);
    const joined = deadline.acquire();
    expect(joined.signal).toBe(early.signal);
    vi.advanceTimersByTime(1);
    const late = deadline.acquire();
    expect(late.signal).not.toBe(early.signal);
    // The early signal aborts 20 s after the first call started; the late call still has its time.
    vi.advanceTimersByTime(19_900);
    expect([early, joined, late].map((slot) => aborted(slot.signal))).toEqual([true, true, false]);
    vi.advanceTimersByTime(100);
    expect(aborted(late.signal)).toBe(true);
  });

  it("shares a signal among at most 64 calls, without a max-listeners warning", async () => {
    vi.useFakeTimers();
    const warnings: unknown[] = [];
    const onWarning = (warning: unknown) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const deadline = new SharedDeadline(20_000);
      const slots = Array.from({ length: 65 }, () => deadline.acquire());
      expect(new Set(slots.slice(0, 64).map((slot) => slot.signal)).size).toBe(1);
      expect(slots[64]!.signal).not.toBe(slots[0]!.signal);
      for (const slot of slots) for (let i = 0; i < 2; i++) slot.signal.addEventListener("abort", () => {});
      for (const slot of slots) deadline.release(slot);
      expect(vi.getTimerCount()).toBe(0);
      // Warnings are emitted on the next tick (not faked).
      await new Promise((resolve) => process.nextTick(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it("judges whether a call may join by the monotonic clock: a wall clock set back gives no call less than its timeout", () => {
    vi.useFakeTimers();
    const deadline = new SharedDeadline(10_000);
    const slow = deadline.acquire();
    vi.advanceTimersByTime(9_900);
    vi.setSystemTime(Date.now() - 60_000); // an NTP correction, a VM resumed
    const fresh = deadline.acquire();
    vi.advanceTimersByTime(100);
    expect(aborted(fresh.signal)).toBe(false);
    deadline.release(slow);
    deadline.release(fresh);
  });
});
