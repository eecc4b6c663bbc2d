import { Simulator } from "@purchase-auth/sandbox";
import { describe, expect, it } from "vitest";
import { ownWorkMicrosPerCreate } from "../bench/own-work.js";
import { CREATE_PATH } from "../bench/wire.js";

// Row 5's busy floor computes per request as long as this says a create's own work takes; a figure
// from creates that never ran, that were refused early, or that timed the stores' filling too, would
// misstate the create's layers.

describe("the create's own work without HTTP", () => {
  it("fills the stores, then times windows of creates that were each authorized", async () => {
    const sandbox = new Simulator({ maxStoredObjects: 30, maxIdempotencyKeys: 40 });
    // A CPU clock that tells the windows apart and records, at each reading, how many creates the
    // sandbox had made and how many idempotency keys had been made for requests.
    const readings: number[] = [];
    const keysAtReading: number[] = [];
    let keys = 0;
    const newKey = () => `${(keys++).toString(16).padStart(8, "0")}-0000-4000-8000-000000000000`;
    const perWindow = [9, 4, 1]; // µs per create of each window: median 4 (mean 4.67, first 9, last 1)
    const cpuMicros = () => {
      keysAtReading.push(keys);
      readings.push(sandbox.stats().authorizations);
      const window = Math.floor((readings.length - 1) / 2);
      return readings.length % 2 === 1 ? 1_000 * window : 1_000 * window + perWindow[window]! * 25;
    };
    const micros = await ownWorkMicrosPerCreate(
      sandbox,
      { fill: true, windows: 3, createsPerWindow: 25 },
      { cpuMicros, newKey },
    );
    expect(micros).toBe(4);
    // Every window started after the larger store was filled (40) and timed its own 25 creates only.
    expect(readings).toEqual([40, 65, 65, 90, 90, 115]);
    // Each window's requests were built before its first reading: no key made while it was timed.
    expect(keysAtReading).toEqual([65, 65, 90, 90, 115, 115]);
    expect(sandbox.stats().orders).toBe(115); // each one authorized: a synchronous success makes an order
    sandbox.dispose();
  });

  it("fills only what the stores may still lack, and nothing when told not to", async () => {
    const sandbox = new Simulator({ maxStoredObjects: 30, maxIdempotencyKeys: 30 });
    await ownWorkMicrosPerCreate(sandbox, { fill: true, windows: 1, createsPerWindow: 20 });
    expect(sandbox.stats().authorizations).toBe(30 + 20);
    await ownWorkMicrosPerCreate(sandbox, { fill: true, windows: 1, createsPerWindow: 20 });
    expect(sandbox.stats().authorizations).toBe(50 + 20); // 50 made already: full
    const fresh = new Simulator({ maxStoredObjects: 30, maxIdempotencyKeys: 30 });
    await ownWorkMicrosPerCreate(fresh, { fill: false, windows: 2, createsPerWindow: 5 });
    expect(fresh.stats().authorizations).toBe(10);
    sandbox.dispose();
    fresh.dispose();
  });

  it("gives µs per create within the CPU the whole call used (the default clock)", async () => {
    const sandbox = new Simulator({ maxStoredObjects: 10, maxIdempotencyKeys: 10 });
    const before = process.cpuUsage();
    const micros = await ownWorkMicrosPerCreate(sandbox, { fill: false, windows: 1, createsPerWindow: 200 });
    const used = process.cpuUsage(before);
    expect(micros).toBeGreaterThan(0);
    expect(micros * 200).toBeLessThanOrEqual(used.user + used.system); // within what the call used
    sandbox.dispose();
  });

  it("fails when a create is not answered 200", async () => {
    const sandbox = new Simulator({ maxStoredObjects: 10, maxIdempotencyKeys: 10 });
    sandbox.injectFault({ kind: "unavailable", match: { method: "POST", path: CREATE_PATH }, count: 1 });
    await expect(
      ownWorkMicrosPerCreate(sandbox, { fill: true, windows: 1, createsPerWindow: 5 }),
    ).rejects.toThrow(/a create answered 503/);
    sandbox.dispose();
  });
});
