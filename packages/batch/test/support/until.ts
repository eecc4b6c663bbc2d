import type { BatchItemRecord } from "../../src/index.js";

/** What a failed wait shows: a record's status and log, never its item (which holds a customer token). */
export function brief(value: unknown): string {
  const record = value as Partial<BatchItemRecord> | undefined;
  if (record?.status !== undefined && record.log !== undefined) {
    return JSON.stringify({
      status: record.status,
      log: record.log.map((entry) => `${entry.outcome}:${entry.reason ?? ""}`),
    });
  }
  return JSON.stringify(value);
}

/** Polls `probe` until `done` holds, or throws after `capMs` naming `what` and the last value seen. */
export async function until<T>(
  what: string,
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  capMs = 60_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() - started > capMs) {
      throw new Error(`${what}: not reached within ${capMs} ms (${brief(value)})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
