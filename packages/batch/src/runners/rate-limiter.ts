/**
 * Waits for a start slot. Rejects with a `RateLimitWaitAbortedError` when the call's `signal` (a
 * pg-boss job's deadline) or the limiter's own signal aborts first: the caller must not start then,
 * and its slot goes to the next in line.
 */
export type RateLimiter = (signal?: AbortSignal) => Promise<void>;

/** A wait for a start slot that a signal cut short: the caller must not start. */
export class RateLimitWaitAbortedError extends Error {
  constructor(signal: AbortSignal) {
    super("The wait for the rate limiter was aborted; nothing was started", { cause: signal.reason });
    // The name of node's aborted timers, which callers already recognise as "stopped, not failed".
    this.name = "AbortError";
  }
}

interface Waiter {
  start(): void;
  abort(by: AbortSignal): void;
}

/**
 * At most `perSecond` starts per second, evenly spaced (no bursts after a pause). Shared by all the
 * workers of one runner; with several processes each has its own, so the total is the sum.
 *
 * Callers wait in line, in arrival order. `signal` ends every wait (the run or the worker stops);
 * a call's own signal ends its wait only. A caller whose wait ends leaves the line without taking a
 * slot: the others move up and keep their spacing, instead of waiting behind a slot nobody uses.
 */
export function rateLimiter(perSecond: number | undefined, signal?: AbortSignal): RateLimiter {
  if (perSecond === undefined || perSecond === Number.POSITIVE_INFINITY) return async () => {};
  if (!(perSecond > 0)) throw new TypeError("ratePerSecond must be a number above 0");
  const interval = 1000 / perSecond;
  let next = performance.now(); // the earliest time of the next start
  let line: Waiter[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  const stopTimer = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  const wakeAtNextSlot = () => {
    if (timer !== undefined || line.length === 0) return;
    timer = setTimeout(startFirstInLine, Math.max(0, next - performance.now()));
  };
  function startFirstInLine() {
    timer = undefined;
    const first = line.shift();
    if (first === undefined) return;
    // Its slot is `next` (it arrived before it): a late timer does not shift the slots after it.
    next += interval;
    first.start();
    wakeAtNextSlot();
  }
  // One listener for the limiter's life, none per call: `signal` outlives every wait.
  signal?.addEventListener(
    "abort",
    () => {
      const waiting = line;
      line = [];
      stopTimer();
      for (const waiter of waiting) waiter.abort(signal);
    },
    { once: true },
  );

  return (own) => {
    const aborted = signal?.aborted ? signal : own?.aborted ? own : undefined;
    if (aborted !== undefined) return Promise.reject(new RateLimitWaitAbortedError(aborted));
    const now = performance.now();
    if (line.length === 0 && next <= now) {
      next = now + interval;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const leave = () => {
        line = line.filter((other) => other !== waiter);
        if (line.length === 0) stopTimer();
        waiter.abort(own!);
      };
      const waiter: Waiter = {
        start() {
          own?.removeEventListener("abort", leave);
          resolve();
        },
        abort(by) {
          own?.removeEventListener("abort", leave);
          reject(new RateLimitWaitAbortedError(by));
        },
      };
      own?.addEventListener("abort", leave, { once: true });
      line.push(waiter);
      wakeAtNextSlot();
    });
  };
}
