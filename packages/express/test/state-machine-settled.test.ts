import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { advance } from "../src/charges/state-machine.js";
import { chargeSentAt, nextWeek } from "./support/offline-router.js";

// A charge that settles drops the details of its attempt (its retry reason, its write-ahead
// record): copied without them, not deleted from a copy (V8 keeps a record with a deleted field as a
// slow dictionary object).

describe("advance keeps or drops the attempt details by status", () => {
  const base = () => chargeSentAt(Date.now() - 1000, nextWeek(), { reason: "RETRYING_X" });
  it("keeps them for pending, failed and needs_review; drops them once authorized; no deleted fields", () => {
    const now = new Date();
    const pending = advance(base(), { kind: "accepted", authorizationId: randomUUID(), attempt: 1 }, now)!;
    expect(pending.status).toBe("pending");
    expect(pending.reason).toBe("RETRYING_X");
    expect(pending.pendingAuthorization).toBeDefined();
    const failed = advance(base(), { kind: "failed", reason: "PAYMENT_DENIED", attempt: 1 }, now)!;
    expect(failed).toMatchObject({ status: "failed", reason: "PAYMENT_DENIED" });
    expect(failed.pendingAuthorization).toBeDefined();
    const review = advance(base(), { kind: "needs_review", reason: "idempotency_window" }, now)!;
    expect(review).toMatchObject({ status: "needs_review", reason: "idempotency_window" });
    expect(review.pendingAuthorization).toBeDefined();
    const id = randomUUID();
    const start = base();
    const paid = advance(
      start,
      { kind: "authorized", authorizationId: id, orderId: "o-1", captured: true, attempt: 1 },
      now,
    )!;
    expect(paid).toMatchObject({
      status: "captured",
      authorizationId: id,
      orderId: "o-1",
      version: start.version + 1,
      updatedAt: now.toISOString(),
    });
    expect("reason" in paid).toBe(false);
    expect("pendingAuthorization" in paid).toBe(false);
    expect(Object.keys(paid)).toEqual(
      Object.keys(paid).filter((k) => k !== "reason" && k !== "pendingAuthorization"),
    );
    // Unchanged news on a settled charge: no write.
    expect(
      advance(
        paid,
        { kind: "authorized", authorizationId: id, orderId: "o-1", captured: true, attempt: 1 },
        now,
      ),
    ).toBeUndefined();
    // A settled record still carrying details (stored by an older release) and news that changes nothing else: no write either (as before).
    const legacy = {
      ...paid,
      reason: undefined,
      pendingAuthorization: start.pendingAuthorization,
    } as typeof paid;
    delete (legacy as { reason?: string }).reason;
    expect(
      advance(
        legacy,
        { kind: "authorized", authorizationId: id, orderId: "o-1", captured: true, attempt: 1 },
        now,
      ),
    ).toBeUndefined();
  });
});
