/**
 * Runs `work` with a signal that aborts after `ms`, with the same `TimeoutError` as
 * `AbortSignal.timeout(ms)`; the timer is cleared as soon as `work` settles. (AbortSignal.timeout
 * would keep its timer alive for the whole timeout after the answer: tens of thousands of live
 * timers under load. Core's transport does the same per attempt.)
 */
export async function withTimeout<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  // No time left: aborted before `work` starts, so nothing it would send goes out.
  if (ms <= 0) controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
  const timer = setTimeout(
    () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
    ms,
  );
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}
