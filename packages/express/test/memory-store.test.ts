import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { advance, CHARGE_STATUSES, isSettled } from "../src/charges/state-machine.js";
import { type ChargeRecord, type ChargeStatus, MemoryChargeStore, purchaseAuth } from "../src/index.js";
import { newCharge } from "./support/store-contract.js";

// What only the memory store does: it is bounded (maxCharges), forgets settled charges before open
// ones, oldest first, and hands out its own frozen records instead of copies.

const OPEN: ChargeStatus[] = ["pending", "needs_review", "authorized", "partially_captured"];
const SETTLED: ChargeStatus[] = [
  "captured",
  "partially_refunded",
  "refunded",
  "cancelled",
  "expired",
  "failed",
];

/** A charge in `status`, with the ids that status implies. */
function chargeIn(status: ChargeStatus, reference = `order-${randomUUID()}`): ChargeRecord {
  const authorized = status !== "pending" && status !== "failed";
  return newCharge({
    reference,
    status,
    authorizationId: randomUUID(),
    ...(authorized ? { orderId: randomUUID() } : {}),
    ...(status === "failed" ? { reason: "PAYMENT_DENIED" } : {}),
  });
}

/** Which of `charges` the store still holds, by reference and by authorization id. */
async function kept(store: MemoryChargeStore, charges: ChargeRecord[]): Promise<string[]> {
  const found: string[] = [];
  for (const charge of charges) {
    const byReference = await store.findByReference(charge.reference);
    const byId = await store.findByAuthorizationId(charge.authorizationId!);
    expect(byId).toBe(byReference);
    if (byReference) found.push(charge.reference);
  }
  return found;
}

function recordingLogger() {
  const warnings: Array<{ message: string; context: Record<string, unknown> }> = [];
  return {
    warnings,
    logger: {
      warn: (message: string, context?: Record<string, unknown>) => {
        warnings.push({ message, context: context ?? {} });
      },
    },
  };
}

describe("which charge statuses are settled (may be forgotten first)", () => {
  it("settled: no capture can follow any more; open: pending, needs review, authorized, partially captured", () => {
    expect(CHARGE_STATUSES.filter(isSettled).sort()).toEqual([...SETTLED].sort());
    expect(CHARGE_STATUSES.filter((status) => !isSettled(status)).sort()).toEqual([...OPEN].sort());
  });
});

describe("MemoryChargeStore: bounded by maxCharges", () => {
  it("never holds more than maxCharges charges, and forgets the oldest first", async () => {
    const store = new MemoryChargeStore({ maxCharges: 3 });
    const charges = SETTLED.map((status) => chargeIn(status));
    for (const charge of charges) expect((await store.create(charge)).created).toBe(true);
    expect(await kept(store, charges)).toEqual(charges.slice(-3).map((charge) => charge.reference));
  });

  it("forgets settled charges before open ones, however old the open ones are", async () => {
    const { logger, warnings } = recordingLogger();
    const store = new MemoryChargeStore({ maxCharges: 4, logger });
    const oldPending = chargeIn("pending");
    const failed = chargeIn("failed");
    const authorized = chargeIn("authorized");
    const captured = chargeIn("captured");
    const partlyCaptured = chargeIn("partially_captured");
    const newPending = chargeIn("pending");
    const all = [oldPending, failed, authorized, captured, partlyCaptured, newPending];
    for (const charge of all.slice(0, 4)) await store.create(charge);

    await store.create(partlyCaptured); // full: the oldest settled charge goes
    expect(await kept(store, all)).toEqual(
      [oldPending, authorized, captured, partlyCaptured].map((charge) => charge.reference),
    );
    await store.create(newPending); // the next settled one
    expect(await kept(store, all)).toEqual(
      [oldPending, authorized, partlyCaptured, newPending].map((charge) => charge.reference),
    );
    expect(warnings).toEqual([]);
  });

  it("forgets an open charge only when every charge is open, the oldest first, with a warning", async () => {
    const { logger, warnings } = recordingLogger();
    const store = new MemoryChargeStore({ maxCharges: 3, logger });
    const open = [chargeIn("pending"), chargeIn("authorized"), chargeIn("partially_captured")];
    for (const charge of open) await store.create(charge);
    const next = chargeIn("pending");
    await store.create(next);
    expect(await kept(store, [...open, next])).toEqual([open[1]!, open[2]!, next].map((c) => c.reference));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/maxCharges.*PostgresChargeStore/);
    expect(warnings[0]!.context).toEqual({ reference: open[0]!.reference, status: "pending", maxCharges: 3 });
  });

  it("'oldest' is the charge written longest ago: a change moves a charge to the back", async () => {
    const store = new MemoryChargeStore({ maxCharges: 3 });
    const first = chargeIn("captured");
    const second = chargeIn("captured");
    const third = chargeIn("failed");
    for (const charge of [first, second, third]) await store.create(charge);
    // The first charge is refunded in part: it was written last now.
    const refunded = { ...first, status: "partially_refunded" as const, version: 2 };
    expect(await store.compareAndSet(1, refunded)).toEqual(refunded);

    const fourth = chargeIn("pending");
    await store.create(fourth);
    expect(await kept(store, [first, second, third, fourth])).toEqual(
      [first, third, fourth].map((charge) => charge.reference),
    );
  });

  it("a charge that settles becomes forgettable; one that starts a new attempt is kept", async () => {
    const store = new MemoryChargeStore({ maxCharges: 2 });
    const pending = chargeIn("pending");
    const failed = chargeIn("failed");
    await store.create(pending);
    await store.create(failed);
    // The pending charge is captured (settled); the failed one starts its next attempt (open).
    const captured = advance(
      pending,
      {
        kind: "authorized",
        authorizationId: pending.authorizationId!,
        orderId: randomUUID(),
        captured: true,
      },
      new Date(),
    )!;
    await store.compareAndSet(1, captured);
    const { authorizationId: _, reason: __, ...rest } = failed;
    await store.compareAndSet(1, { ...rest, attempt: 2, status: "pending", version: 2 });

    const third = chargeIn("pending");
    await store.create(third);
    expect(await store.findByReference(pending.reference)).toBeUndefined();
    expect(await store.findByReference(failed.reference)).toMatchObject({ attempt: 2, status: "pending" });
    expect(await store.findByReference(third.reference)).toBeDefined();
  });

  it("a forgotten charge frees its authorization id; the charge created in its place is kept", async () => {
    const store = new MemoryChargeStore({ maxCharges: 1 });
    const old = chargeIn("failed");
    await store.create(old);
    const replacement = chargeIn("pending", old.reference);
    expect(await store.create(replacement)).toEqual({ charge: old, created: false });

    const other = chargeIn("pending");
    await store.create(other);
    expect(await store.findByReference(old.reference)).toBeUndefined();
    expect(await store.findByAuthorizationId(old.authorizationId!)).toBeUndefined();
    // The id is no longer held: another charge may learn it without an error.
    const learnt = { ...other, authorizationId: old.authorizationId!, version: 2 };
    expect(await store.compareAndSet(1, learnt)).toEqual(learnt);
    expect(await store.findByAuthorizationId(old.authorizationId!)).toEqual(learnt);
  });

  it("keeps 100,000 charges by default, and the router's default store warns through its logger", async () => {
    const { logger, warnings } = recordingLogger();
    const router = purchaseAuth({
      clientOptions: {
        baseUrl: "http://127.0.0.1:4010",
        clientId: "client",
        clientSecret: "secret-value",
        scope: "api://purchase-auth-sandbox/.default",
      },
      resolveCustomer: () => null,
      buildOrder: () => ({ reference: "order-1", currency: "EUR", items: [] }),
      webhookSecret: "whsec_test",
      logger,
    });
    try {
      const { store } = router;
      const template = newCharge();
      for (let i = 0; i < 100_000; i++) await store.create({ ...template, reference: `order-${i}` });
      expect(await store.findByReference("order-0")).toBeDefined();
      expect(warnings).toEqual([]);
      await store.create({ ...template, reference: "order-100000" });
      expect(await store.findByReference("order-0")).toBeUndefined();
      expect(await store.findByReference("order-1")).toBeDefined();
      expect(warnings.map((warning) => warning.context.reference)).toEqual(["order-0"]);
    } finally {
      await router.close();
    }
  });

  it("refuses a maxCharges that is not a positive whole number", () => {
    expect(() => new MemoryChargeStore({ maxCharges: 0 })).toThrow(
      /maxCharges must be a positive whole number/,
    );
    expect(() => new MemoryChargeStore({ maxCharges: 2.5 })).toThrow(/maxCharges/);
    expect(() => new MemoryChargeStore({ maxEvents: -1 })).toThrow(/maxEvents/);
  });
});

describe("MemoryChargeStore: frozen records instead of copies", () => {
  it("returns its own frozen record: the same object on every read, which nobody can change", async () => {
    const store = new MemoryChargeStore();
    const given = chargeIn("authorized");
    const { charge: created } = await store.create(given);
    expect(created).not.toBe(given); // copied once, on the way in
    expect(Object.isFrozen(created)).toBe(true);
    expect(Object.isFrozen(created.operations)).toBe(true);
    expect(await store.findByReference(given.reference)).toBe(created);
    expect(await store.findByAuthorizationId(given.authorizationId!)).toBe(created);
    expect(() => {
      created.operations.capture = 5;
    }).toThrow(TypeError);

    const next = { ...created, operations: { ...created.operations, capture: 1 }, version: 2 };
    const saved = (await store.compareAndSet(1, next))!;
    expect(saved).toEqual(next);
    expect(saved).not.toBe(next);
    expect(Object.isFrozen(saved) && Object.isFrozen(saved.operations)).toBe(true);
    expect(await store.findByReference(given.reference)).toBe(saved);
  });
});

describe("MemoryChargeStore.listPending", () => {
  it("gives any page exactly as sorting every pending charge would (updatedAt, then reference), whatever the write order", async () => {
    const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
    const charges = fc.uniqueArray(
      fc.record({
        reference: fc.stringMatching(/^[a-zA-Z0-9-]{1,6}$/),
        second: fc.integer({ min: 0, max: 5 }),
        pending: fc.boolean(),
      }),
      { selector: (entry) => entry.reference, maxLength: 40 },
    );
    await fc.assert(
      fc.asyncProperty(
        charges,
        fc.integer({ min: 1, max: 12 }),
        fc.option(
          fc.record({ second: fc.integer({ min: 0, max: 5 }), reference: fc.string({ maxLength: 3 }) }),
        ),
        async (entries, limit, cursor) => {
          const store = new MemoryChargeStore();
          const stored = entries.map(({ reference, second, pending }) =>
            newCharge({
              reference,
              updatedAt: at(second),
              ...(pending ? {} : { status: "authorized" as const, authorizationId: randomUUID() }),
            }),
          );
          for (const charge of stored) await store.create(charge);
          const after =
            cursor === null ? undefined : { updatedAt: at(cursor.second), reference: cursor.reference };
          const expected = stored
            .filter((charge) => charge.status === "pending")
            .filter(
              (charge) =>
                after === undefined ||
                charge.updatedAt > after.updatedAt ||
                (charge.updatedAt === after.updatedAt && charge.reference > after.reference),
            )
            .sort((a, b) =>
              a.updatedAt !== b.updatedAt
                ? a.updatedAt.localeCompare(b.updatedAt)
                : a.reference < b.reference
                  ? -1
                  : a.reference > b.reference
                    ? 1
                    : 0,
            )
            .slice(0, limit)
            .map((charge) => charge.reference);
          const page = await store.listPending(limit, after);
          expect(page.map((charge) => charge.reference)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
