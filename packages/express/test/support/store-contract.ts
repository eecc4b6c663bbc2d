import { randomUUID } from "node:crypto";
import type { WebhookEvent } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { advance } from "../../src/charges/state-machine.js";
import type { ChargeRecord, ChargeStore, PendingCursor, StoredWebhookEvent } from "../../src/index.js";

// The contract of ChargeStore, one suite for every implementation: whatever passes it can back the
// router. `makeStore` gives a store on empty tables; `makeTwin` (when given) a second instance on the
// same data, as two app instances behind a load balancer.

export interface StoreContractSetup {
  makeStore(): Promise<ChargeStore>;
  makeTwin?(): Promise<ChargeStore>;
}

export function newCharge(overrides: Partial<ChargeRecord> = {}): ChargeRecord {
  const now = new Date().toISOString();
  return {
    reference: `order-${randomUUID()}`,
    customerId: "customer-1",
    attempt: 1,
    status: "pending",
    amount: "120.50",
    currency: "EUR",
    captureMode: "Manual",
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: 1,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

function storedEvent(authorizationId: string | undefined, type = "order.captured"): StoredWebhookEvent {
  const id = randomUUID();
  return {
    id,
    ...(authorizationId === undefined ? {} : { authorizationId }),
    event: {
      id,
      type,
      createdAt: new Date().toISOString(),
      data: { authorizationId },
    } as unknown as WebhookEvent,
    receivedAt: new Date().toISOString(),
  };
}

const NOW = new Date();

/**
 * Changes every field a caller could reach. A store may return copies or frozen records: a frozen
 * one throws (strict mode), and either way the store's state must stay as it was.
 */
function tryToChange(record: ChargeRecord): void {
  const attempts = [
    () => {
      record.status = "refunded";
    },
    () => {
      record.amount = "0.01";
    },
    () => {
      record.version += 10;
    },
    () => {
      record.operations.capture = 99;
    },
    () => {
      record.operations = { capture: 7, cancel: 7, refund: 7 };
    },
    () => {
      delete record.authorizationId;
    },
  ];
  for (const attempt of attempts) {
    try {
      attempt();
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
  }
}

export function chargeStoreContract(name: string, setup: StoreContractSetup): void {
  describe(`${name}: ChargeStore contract`, () => {
    it("creates a charge once per reference and reads it back by reference and authorization id", async () => {
      const store = await setup.makeStore();
      const charge = newCharge();
      expect(await store.create(charge)).toEqual({ charge, created: true });
      const again = await store.create({ ...charge, customerId: "someone-else", amount: "1.00" });
      expect(again).toEqual({ charge, created: false });
      expect(await store.findByReference(charge.reference)).toEqual(charge);
      expect(await store.findByReference("no-such-order")).toBeUndefined();

      const id = randomUUID();
      const accepted = advance(charge, { kind: "accepted", authorizationId: id }, NOW)!;
      expect(await store.compareAndSet(1, accepted)).toEqual(accepted);
      expect(await store.findByAuthorizationId(id)).toEqual(accepted);
      expect(await store.findByAuthorizationId(id.toUpperCase())).toEqual(accepted);
      expect(await store.findByAuthorizationId(randomUUID())).toBeUndefined();
    });

    it("keeps every field, optional ones too, and exact decimal strings", async () => {
      const store = await setup.makeStore();
      // Required<>: a field added to ChargeRecord fails to compile here until this test sets it.
      const charge: Required<ChargeRecord> = {
        ...newCharge(),
        amount: "0.10",
        authorizationId: randomUUID(),
        orderId: randomUUID(),
        status: "failed",
        reason: "TOKEN_REVOKED",
        previousAuthorizationIds: [randomUUID(), randomUUID()],
        orderFingerprint: "f".repeat(64),
        operations: { capture: 2, cancel: 0, refund: 1 },
        pendingAuthorization: {
          idempotencyKey: randomUUID(),
          request: {
            customerToken: randomUUID(),
            order: {
              currency: "EUR",
              reference: "r-1",
              items: [{ id: "a", description: "A", unitPrice: "0.10", quantity: "1", vat: "24" }],
            },
          },
          firstSentAt: NOW.toISOString(),
        },
        operationLog: {
          "refund:1": { operation: "refund", sequence: 1, fingerprint: "a".repeat(64), state: "done" },
        },
      };
      await store.create(charge);
      expect(await store.findByReference(charge.reference)).toStrictEqual(charge);
      const next = {
        ...charge,
        attempt: 2,
        previousAuthorizationIds: [...charge.previousAuthorizationIds, randomUUID()],
        orderFingerprint: "e".repeat(64),
        operations: { capture: 3, cancel: 1, refund: 2 },
        version: 2,
      };
      expect(await store.compareAndSet(1, next)).toStrictEqual(next);
      expect(await store.findByAuthorizationId(charge.authorizationId)).toStrictEqual(next);
    });

    it("of concurrent creates for one reference, exactly one creates", async () => {
      const store = await setup.makeStore();
      const twin = setup.makeTwin ? await setup.makeTwin() : store;
      const reference = `order-${randomUUID()}`;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? twin : store).create(newCharge({ reference, customerId: `c${i}` })),
        ),
      );
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const winner = results.find((result) => result.created)!.charge;
      for (const result of results) expect(result.charge).toEqual(winner);
    });

    it("compare-and-set: applies on the expected version only", async () => {
      const store = await setup.makeStore();
      const charge = newCharge();
      await store.create(charge);
      const authorized = advance(
        charge,
        { kind: "authorized", authorizationId: randomUUID(), orderId: randomUUID(), captured: false },
        NOW,
      )!;
      expect(await store.compareAndSet(1, authorized)).toEqual(authorized);
      // A writer that read version 1 is too late.
      const stale = advance(charge, { kind: "failed", reason: "PAYMENT_DENIED" }, NOW)!;
      expect(await store.compareAndSet(1, stale)).toBeUndefined();
      expect(await store.findByReference(charge.reference)).toEqual(authorized);
      expect(
        await store.compareAndSet(1, newCharge({ reference: "no-such-order", version: 2 })),
      ).toBeUndefined();
    });

    it("compare-and-set refuses a backwards move even on the right version", async () => {
      const store = await setup.makeStore();
      const charge = newCharge({ status: "captured", authorizationId: randomUUID(), orderId: randomUUID() });
      await store.create(charge);
      const backwards = { ...charge, status: "authorized" as const, version: 2 };
      await expect(store.compareAndSet(1, backwards)).rejects.toThrow(/backwards/);
      const failedAfterSuccess = { ...charge, status: "failed" as const, version: 2 };
      await expect(store.compareAndSet(1, failedAfterSuccess)).rejects.toThrow(/backwards/);
      expect(await store.findByReference(charge.reference)).toEqual(charge);
      // A new attempt is the one way a failed charge starts over.
      const failed = newCharge({ status: "failed", reason: "TOKEN_REVOKED" });
      await store.create(failed);
      const retry = { ...failed, attempt: 2, status: "pending" as const, version: 2 };
      delete (retry as Partial<ChargeRecord>).reason;
      expect(await store.compareAndSet(1, retry)).toEqual(retry);
    });

    it("an authorization id belongs to one charge", async () => {
      const store = await setup.makeStore();
      const id = randomUUID();
      await store.create(newCharge({ authorizationId: id }));
      const other = newCharge();
      await store.create(other);
      await expect(store.compareAndSet(1, { ...other, authorizationId: id, version: 2 })).rejects.toThrow(
        /another charge/,
      );
    });

    it("concurrent compare-and-set rounds from two instances: every writer's news lands once", async () => {
      const store = await setup.makeStore();
      const twin = setup.makeTwin ? await setup.makeTwin() : store;
      const charge = newCharge({
        status: "authorized",
        authorizationId: randomUUID(),
        orderId: randomUUID(),
      });
      await store.create(charge);
      const writers = Array.from({ length: 10 }, (_, i) => async () => {
        const instance = i % 2 ? twin : store;
        for (;;) {
          const current = (await instance.findByReference(charge.reference))!;
          const next = {
            ...current,
            operations: { ...current.operations, capture: current.operations.capture + 1 },
            version: current.version + 1,
          };
          if (await instance.compareAndSet(current.version, next)) return;
        }
      });
      await Promise.all(writers.map((write) => write()));
      const final = (await twin.findByReference(charge.reference))!;
      expect(final.operations.capture).toBe(10);
      expect(final.version).toBe(11);
    });

    it("webhook events: stored once, duplicates known only once applied, waiting events by id", async () => {
      const store = await setup.makeStore();
      const twin = setup.makeTwin ? await setup.makeTwin() : store;
      const authorizationId = randomUUID();
      const first = storedEvent(authorizationId);
      const second = storedEvent(authorizationId);
      const unrelated = storedEvent(undefined, "customer-token.status-changed");

      expect(await store.recordEvent(first)).toEqual({ alreadyApplied: false });
      // Stored but not applied (a crash between): a redelivery must be applied, not skipped.
      expect(await twin.recordEvent(first)).toEqual({ alreadyApplied: false });
      expect(await store.recordEvent(second)).toEqual({ alreadyApplied: false });
      expect(await store.recordEvent(unrelated)).toEqual({ alreadyApplied: false });

      const waiting = await twin.unappliedEvents(authorizationId.toUpperCase());
      expect(waiting.map((event) => event.id).sort()).toEqual([first.id, second.id].sort());
      expect(waiting.find((event) => event.id === first.id)).toEqual(first);

      await store.markEventApplied(first.id);
      await store.markEventApplied(first.id); // idempotent
      expect(await twin.recordEvent(first)).toEqual({ alreadyApplied: true });
      expect((await store.unappliedEvents(authorizationId)).map((event) => event.id)).toEqual([second.id]);
      expect(await store.unappliedEvents(randomUUID())).toEqual([]);
    });

    it("lists the charges that know an authorization id whose events are still unapplied (for the reconciler)", async () => {
      const store = await setup.makeStore();
      const authorizationId = randomUUID();
      const waiting = newCharge({ status: "authorized", authorizationId });
      const settled = newCharge({ status: "authorized", authorizationId: randomUUID() });
      await store.create(waiting);
      await store.create(settled);
      const event = storedEvent(authorizationId);
      await store.recordEvent(event);
      await store.recordEvent(storedEvent(randomUUID())); // about an id no charge knows
      const pending = newCharge({ authorizationId: randomUUID() }); // the reconciler's other loop
      await store.create(pending);
      await store.recordEvent(storedEvent(pending.authorizationId));
      const listed = async (after?: string) =>
        (await store.listWithUnappliedEvents!(100_000, after)).map((charge) => charge.reference);
      expect(await listed()).toContain(waiting.reference);
      expect(await listed()).not.toContain(settled.reference);
      expect(await listed()).not.toContain(pending.reference);
      // Pages by reference: a page starts after the last one's last reference.
      expect(await listed(waiting.reference)).not.toContain(waiting.reference);
      const all = await listed();
      expect(all).toEqual([...all].sort());
      await store.markEventApplied(event.id);
      expect(await listed()).not.toContain(waiting.reference);
    });

    it("lists pending charges least recently written first, and pages after a cursor without skipping or repeating one", async () => {
      const store = await setup.makeStore();
      // Written long ago, so that they come before any other test's charges in a shared table.
      const at = (second: number) => new Date(Date.UTC(2001, 0, 1, 0, 0, second)).toISOString();
      const tag = `pages-${randomUUID().slice(0, 8)}`;
      const ref = (name: string) => `${tag}-${name}`;
      const charges = [
        newCharge({ reference: ref("d"), updatedAt: at(3) }),
        newCharge({ reference: ref("c"), updatedAt: at(1) }),
        newCharge({ reference: ref("f"), updatedAt: at(4) }),
        newCharge({ reference: ref("b"), updatedAt: at(2) }), // the same time as "a": by reference
        newCharge({
          reference: ref("e"),
          updatedAt: at(1),
          status: "authorized",
          authorizationId: randomUUID(),
        }),
        newCharge({ reference: ref("a"), updatedAt: at(2) }),
      ];
      for (const charge of charges) await store.create(charge);
      const expected = ["c", "a", "b", "d", "f"].map(ref);

      const all = await store.listPending!(100_000);
      expect(all.map((charge) => charge.reference).filter((reference) => reference.startsWith(tag))).toEqual(
        expected,
      );
      const seen: string[] = [];
      let after: PendingCursor = { updatedAt: at(0), reference: "" };
      for (let page = 0; page < 10; page++) {
        const found = await store.listPending!(2, after);
        const ours = found.filter((charge) => charge.reference.startsWith(tag));
        seen.push(...ours.map((charge) => charge.reference));
        const last = found[found.length - 1];
        if (last === undefined || ours.length < found.length) break;
        after = { updatedAt: last.updatedAt, reference: last.reference };
      }
      expect(seen).toEqual(expected);
    });

    it("lists the unanswered pending charges (no authorization id) in the same order, paging the same way", async () => {
      const store = await setup.makeStore();
      const at = (second: number) => new Date(Date.UTC(2001, 0, 1, 0, 1, second)).toISOString();
      const tag = `unanswered-${randomUUID().slice(0, 8)}`;
      const ref = (name: string) => `${tag}-${name}`;
      const charges = [
        newCharge({ reference: ref("c"), updatedAt: at(3) }),
        // Accepted: pending, but its authorization id is known (its outcome comes by webhook).
        newCharge({ reference: ref("accepted"), updatedAt: at(1), authorizationId: randomUUID() }),
        newCharge({ reference: ref("b"), updatedAt: at(2) }),
        newCharge({ reference: ref("a"), updatedAt: at(2) }),
        newCharge({
          reference: ref("paid"),
          updatedAt: at(1),
          status: "captured",
          authorizationId: randomUUID(),
        }),
      ];
      for (const charge of charges) await store.create(charge);
      const expected = ["a", "b", "c"].map(ref);
      const ours = (found: ChargeRecord[]) =>
        found.map((charge) => charge.reference).filter((reference) => reference.startsWith(tag));

      expect(ours(await store.listUnanswered!(100_000))).toEqual(expected);
      const first = await store.listUnanswered!(1, { updatedAt: at(0), reference: "" });
      expect(ours(first)).toEqual([ref("a")]);
      const rest = await store.listUnanswered!(100_000, {
        updatedAt: first[0]!.updatedAt,
        reference: first[0]!.reference,
      });
      expect(ours(rest)).toEqual([ref("b"), ref("c")]);
    });

    it("of concurrent deliveries of one event, all are stored as one", async () => {
      const store = await setup.makeStore();
      const twin = setup.makeTwin ? await setup.makeTwin() : store;
      const authorizationId = randomUUID();
      const event = storedEvent(authorizationId);
      await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? twin : store).recordEvent(event)));
      expect(await store.unappliedEvents(authorizationId)).toHaveLength(1);
    });

    it("isolates its state: changing a record given to it or returned by it changes nothing stored", async () => {
      const store = await setup.makeStore();
      const given = newCharge();
      const created = structuredClone(given);
      const { charge: returned } = await store.create(given);
      tryToChange(given); // copied on the way in
      tryToChange(returned); // a copy, or frozen
      const found = (await store.findByReference(created.reference))!;
      expect(found).toEqual(created);
      tryToChange(found);
      expect(await store.findByReference(created.reference)).toEqual(created);

      const id = randomUUID();
      const next = advance(created, { kind: "accepted", authorizationId: id }, NOW)!;
      const accepted = structuredClone(next);
      const saved = (await store.compareAndSet(1, next))!;
      tryToChange(next);
      tryToChange(saved);
      tryToChange((await store.findByAuthorizationId(id))!);
      expect(await store.findByReference(created.reference)).toEqual(accepted);
      expect(await store.findByAuthorizationId(id)).toEqual(accepted);
    });
  });
}
