import { Simulator } from "@purchase-auth/sandbox";
import { describe, expect, it } from "vitest";
import { ownWorkMicrosPerCreate } from "../bench/own-work.js";
import { CREATE_PATH } from "../bench/wire.js";

// Row 5's busy floor computes per request as long as this says a create's own work takes; a figure
// from creates that never ran, or that were refused early, would make the create's layers look
// cheaper than they are.

describe("the create's own work without HTTP", () => {
  it("fills the stores, then measures creates that were each authorized", async () => {
    const sandbox = new Simulator({ maxStoredObjects: 30, maxIdempotencyKeys: 40 });
    const micros = await ownWorkMicrosPerCreate(sandbox, 25);
    expect(micros).toBeGreaterThan(0);
    expect(Number.isFinite(micros)).toBe(true);
    const stats = sandbox.stats();
    expect(stats.authorizations).toBe(40 + 25); // the larger store filled, then the measured creates
    expect(stats.orders).toBe(40 + 25); // each one authorized: a synchronous success makes an order
    sandbox.dispose();
  });

  it("fails when a create is not answered 200", async () => {
    const sandbox = new Simulator({ maxStoredObjects: 10, maxIdempotencyKeys: 10 });
    sandbox.injectFault({ kind: "unavailable", match: { method: "POST", path: CREATE_PATH }, count: 1 });
    await expect(ownWorkMicrosPerCreate(sandbox, 5)).rejects.toThrow(/a create answered 503/);
    sandbox.dispose();
  });
});
