import { setTimeout as sleep } from "node:timers/promises";

/**
 * At most `perSecond` starts per second, evenly spaced (no bursts after a pause). Shared by all the
 * workers of one runner; with several processes each has its own, so the total is the sum.
 */
export function rateLimiter(perSecond: number | undefined, signal?: AbortSignal): () => Promise<void> {
  if (perSecond === undefined || perSecond === Number.POSITIVE_INFINITY) return async () => {};
  if (!(perSecond > 0)) throw new TypeError("ratePerSecond must be a number above 0");
  const interval = 1000 / perSecond;
  let next = performance.now();
  return async () => {
    const now = performance.now();
    const slot = Math.max(now, next);
    next = slot + interval;
    if (slot > now) await sleep(slot - now, undefined, signal ? { signal } : undefined);
  };
}
