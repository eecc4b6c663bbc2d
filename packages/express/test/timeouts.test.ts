import { afterEach, describe, expect, it, vi } from "vitest";
import { withTimeout } from "../src/http/timeout.js";
import { call, charge, staffOnly, useShops } from "./support/shop.js";

// The routes' `timeoutMs`: the charge route hands it to core as the call's own deadline (no timer or
// signal of its own; "a service slower than timeoutMs" in abuse.test.ts shows it bounds the wait);
// the merchant routes use one timer per request, cleared as soon as the calls to the service are
// done (an AbortSignal.timeout would stay alive for the whole timeout after the answer).

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("withTimeout", () => {
  it("clears its timer as soon as the work settles, resolved or rejected", async () => {
    vi.useFakeTimers();
    await expect(withTimeout(20_000, async () => "done")).resolves.toBe("done");
    expect(vi.getTimerCount()).toBe(0);
    await expect(withTimeout(20_000, async () => Promise.reject(new Error("refused")))).rejects.toThrow(
      "refused",
    );
    expect(vi.getTimerCount()).toBe(0);
  });

  it("aborts the work's signal with a TimeoutError, as AbortSignal.timeout does", async () => {
    vi.useFakeTimers();
    const work = withTimeout(
      100,
      (signal) =>
        new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    );
    const outcome = expect(work).rejects.toMatchObject({ name: "TimeoutError" });
    vi.advanceTimersByTime(100);
    await outcome;
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("the routes' timeouts", () => {
  const shops = useShops();
  /** A value no other timer of the process uses, to tell the routes' timers apart. */
  const TIMEOUT_MS = 54_321;
  const isRouteTimeout = (ms: unknown) =>
    typeof ms === "number" && ms <= TIMEOUT_MS && ms > TIMEOUT_MS - 5_000;

  it("the charge route starts no timer of its own, and the merchant route leaves none running after it answers", async () => {
    const { data, app } = await shops.shop({
      timeoutMs: TIMEOUT_MS,
      authorizeMerchant: staffOnly,
      allowedCaptureModes: ["Manual"],
    });
    const started: unknown[] = [];
    const cleared = new Set<unknown>();
    const { setTimeout: realSetTimeout, clearTimeout: realClearTimeout } = globalThis;
    vi.spyOn(globalThis, "setTimeout").mockImplementation(((...args: Parameters<typeof setTimeout>) => {
      const timer = realSetTimeout(...args);
      // The routes' own timers (withTimeout's): the merchant route's runs from the send's stored
      // lastSentAt, so it may be a few ms under TIMEOUT_MS (core's per-attempt timers are not counted).
      if (isRouteTimeout(args[1]) && new Error().stack?.includes("withTimeout")) started.push(timer);
      return timer;
    }) as typeof setTimeout);
    vi.spyOn(globalThis, "clearTimeout").mockImplementation((timer) => {
      cleared.add(timer);
      realClearTimeout(timer);
    });
    const timeoutSignals = vi.spyOn(AbortSignal, "timeout");

    const customer = data.customer();
    const created = await charge(app, customer, { cartId: data.cart(customer), captureMode: "Manual" });
    expect(created.json).toMatchObject({ status: "authorized" });
    const captured = await call(app, "POST", `/charges/${created.json.authorizationId}/capture`, {
      merchant: true,
      headers: { "content-type": "application/json" },
    });
    expect(captured.json).toMatchObject({ status: "captured", operation: { outcome: "done" } });

    expect(started).toHaveLength(1); // the merchant route's; the charge route starts none
    for (const timer of started) expect(cleared.has(timer)).toBe(true);
    // (The sandbox, in this process, uses AbortSignal.timeout for its webhook deliveries.)
    expect(timeoutSignals.mock.calls.filter(([ms]) => ms === TIMEOUT_MS)).toEqual([]);
  });
});
