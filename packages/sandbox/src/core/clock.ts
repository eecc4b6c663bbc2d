import { MAX_VIRTUAL_TIME } from "../control/limits.js";

/**
 * Virtual time = real time + an offset that only grows. Tests move it forward instead of sleeping;
 * between moves it runs at real speed, so a demo left running behaves like the real service.
 */
export class VirtualClock {
  #offsetMs = 0;
  #isoOf = Number.NaN;
  #iso = "";

  /** Virtual epoch milliseconds; time stops at MAX_VIRTUAL_TIME (end of year 9999). */
  now(): number {
    return Math.min(Date.now() + this.#offsetMs, MAX_VIRTUAL_TIME);
  }

  /** Virtual time as an ISO 8601 string (UTC). */
  nowIso(): string {
    return this.iso(this.now());
  }

  /** `new Date(ms).toISOString()`, remembered for the last `ms` (one request asks several times). */
  iso(ms: number): string {
    if (ms !== this.#isoOf) {
      this.#iso = new Date(ms).toISOString();
      this.#isoOf = ms;
    }
    return this.#iso;
  }

  /** Moves virtual time forward by `ms`; it never moves backwards. Returns the new now. */
  advance(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`cannot advance the clock by ${ms} ms`);
    this.#offsetMs += ms;
    return this.now();
  }

  /** Moves virtual time forward to `time` when that is later than now. */
  advanceTo(time: number): void {
    const now = this.now();
    if (time > now) this.#offsetMs += time - now;
  }

  /** Back to real time (used by reset, when nothing scheduled survives). */
  reset(): void {
    this.#offsetMs = 0;
  }
}
