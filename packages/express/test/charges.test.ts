import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { advance, CHARGE_STATUSES, canMove, startNextAttempt } from "../src/charges/state-machine.js";
import {
  type ChargeRecord,
  type ChargeStore,
  MemoryChargeStore,
  type StoredWebhookEvent,
} from "../src/index.js";
import { authorizationSucceeded, pendingCharge, signedEvent } from "./support/charges-kit.js";

// The state machine and the bookkeeping on top of it, without HTTP: the rules every route relies on.

/** An order.captured and an authorization.succeeded for one new authorization of `reference`, signed and verified. */
function authorizationEvents(reference: string) {
  const authorizationId = randomUUID();
  const orderId = randomUUID();
  const captured = signedEvent("order.captured", {
    orderId,
    authorizationId,
    amount: "49.80",
    currency: "EUR",
    status: "Activated",
  });
  const succeeded = authorizationSucceeded(reference, { authorizationId, orderId });
  return { authorizationId, orderId, captured, succeeded };
}

const NOW = new Date();

describe("state machine", () => {
  it("moves only forward: no status can go back to one it came from", () => {
    for (const from of CHARGE_STATUSES) {
      for (const to of CHARGE_STATUSES) {
        if (canMove(from, to)) expect(canMove(to, from)).toBe(false);
      }
      expect(canMove(from, from)).toBe(false);
    }
    expect(canMove("failed", "authorized")).toBe(false);
    expect(canMove("captured", "authorized")).toBe(false);
    expect(canMove("refunded", "partially_refunded")).toBe(false);
  });

  it("news of an authorization the charge does not hold changes nothing but remembering it as not the charge's", () => {
    const charge = pendingCharge({ authorizationId: randomUUID() });
    const other = randomUUID().toUpperCase();
    const next = advance(charge, { kind: "failed", authorizationId: other, reason: "PAYMENT_DENIED" }, NOW);
    expect(next).toEqual({
      ...charge,
      previousAuthorizationIds: [other.toLowerCase()],
      version: charge.version + 1,
      updatedAt: NOW.toISOString(),
    });
    // From then on it is an earlier attempt's: its news never changes the charge again.
    expect(
      advance(
        next!,
        { kind: "authorized", authorizationId: other, orderId: randomUUID(), captured: true },
        NOW,
      ),
    ).toBe(undefined);
  });

  it("the same news twice changes nothing the second time", () => {
    const id = randomUUID();
    const news = { kind: "authorized", authorizationId: id, orderId: randomUUID(), captured: false } as const;
    const once = advance(pendingCharge(), news, NOW)!;
    expect(once).toMatchObject({ status: "authorized", authorizationId: id, version: 2 });
    expect(advance(once, news, NOW)).toBe(undefined);
  });

  it("a new attempt starts only after a failure, with the next attempt number", () => {
    const order = { amount: "60.00", currency: "EUR", captureMode: "Manual" } as const;
    expect(startNextAttempt(pendingCharge(), order, NOW)).toBe(undefined);
    const failed = pendingCharge({
      status: "failed",
      reason: "TOKEN_REVOKED",
      authorizationId: randomUUID(),
    });
    expect(startNextAttempt(failed, order, NOW)).toEqual({
      ...failed,
      ...order,
      status: "pending",
      attempt: 2,
      authorizationId: undefined,
      previousAuthorizationIds: [failed.authorizationId],
      reason: undefined,
      version: 2,
      updatedAt: NOW.toISOString(),
    });
  });

  it("news of an earlier attempt (by attempt number or by its authorization id) changes nothing", () => {
    const order = { amount: "49.80", currency: "EUR", captureMode: "Auto" } as const;
    const firstId = randomUUID();
    const failed = advance(
      pendingCharge(),
      { kind: "failed", authorizationId: firstId, reason: "PAYMENT_FAILED", attempt: 1 },
      NOW,
    )!;
    const second = startNextAttempt(failed, order, NOW)!;
    // The replayed 422 of attempt 1 (a double click on another instance) must not fail attempt 2.
    expect(advance(second, { kind: "failed", reason: "PAYMENT_FAILED", attempt: 1 }, NOW)).toBe(undefined);
    // Nor may attempt 1's authorization id be adopted by attempt 2.
    expect(advance(second, { kind: "failed", authorizationId: firstId, reason: "X" }, NOW)).toBe(undefined);
    expect(advance(second, { kind: "accepted", authorizationId: firstId }, NOW)).toBe(undefined);
    // Attempt 2's own news applies.
    expect(
      advance(
        second,
        {
          kind: "authorized",
          authorizationId: randomUUID(),
          orderId: randomUUID(),
          captured: true,
          attempt: 2,
        },
        NOW,
      ),
    ).toMatchObject({ status: "captured", attempt: 2 });
  });
});

describe("Charges: earlier attempts", () => {
  const order = { amount: "49.80", currency: "EUR", captureMode: "Auto" } as const;
  const failedEvent = (authorizationId: string, reference: string) =>
    ({
      id: randomUUID(),
      type: "authorization.failed",
      createdAt: NOW.toISOString(),
      data: {
        authorizationId,
        customerToken: randomUUID(),
        reference,
        reason: "PAYMENT_FAILED",
        attempt: 1,
      },
    }) as never;

  function setUp() {
    const store = new MemoryChargeStore();
    const errors: unknown[][] = [];
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: { error: (...args: unknown[]) => errors.push(args) },
      onEvent: undefined,
      alert: async (alert) => {
        errors.push([alert]);
      },
    });
    return { store, charges, errors };
  }

  it("a late 422 of attempt 1 does not fail attempt 2, which then succeeds", async () => {
    const { store, charges } = setUp();
    const charge = pendingCharge();
    await store.create(charge);
    await charges.apply(charge.reference, { kind: "failed", reason: "PAYMENT_FAILED", attempt: 1 });
    await charges.startNextAttempt(charge.reference, order);
    await charges.apply(charge.reference, { kind: "failed", reason: "PAYMENT_FAILED", attempt: 1 });
    const after = await charges.apply(charge.reference, {
      kind: "authorized",
      authorizationId: randomUUID(),
      orderId: randomUUID(),
      captured: true,
      attempt: 2,
    });
    expect(after).toMatchObject({ attempt: 2, status: "captured" });
    // Not failed: no attempt 3, and this call started nothing.
    expect(await charges.startNextAttempt(charge.reference, order)).toMatchObject({
      charge: { attempt: 2 },
      started: false,
    });
  });

  it("a redelivered authorization.failed of attempt 1 neither fails attempt 2 nor gives it its id", async () => {
    const { store, charges } = setUp();
    const charge = pendingCharge();
    const firstId = randomUUID();
    await store.create(charge);
    await charges.apply(charge.reference, { kind: "accepted", authorizationId: firstId, attempt: 1 });
    await charges.apply(charge.reference, {
      kind: "failed",
      authorizationId: firstId,
      reason: "X",
      attempt: 1,
    });
    await charges.startNextAttempt(charge.reference, order);
    await charges.receiveWebhook(failedEvent(firstId, charge.reference));
    expect(await store.findByReference(charge.reference)).toMatchObject({ attempt: 2, status: "pending" });
    const secondId = randomUUID();
    const accepted = await charges.apply(charge.reference, {
      kind: "accepted",
      authorizationId: secondId,
      attempt: 2,
    });
    expect(accepted).toMatchObject({ attempt: 2, status: "pending", authorizationId: secondId });
  });

  it("authorization.failed of an unknown id is not matched by reference to a charge without an id", async () => {
    const { store, charges } = setUp();
    const charge = pendingCharge({ attempt: 2 });
    await store.create(charge);
    expect(await charges.receiveWebhook(failedEvent(randomUUID(), charge.reference))).toBe("parked");
    expect(await store.findByReference(charge.reference)).toMatchObject({ status: "pending" });
  });

  it("an authorization that succeeded for a charge marked failed is logged as an error", async () => {
    const { store, charges, errors } = setUp();
    const charge = pendingCharge();
    await store.create(charge);
    await charges.apply(charge.reference, { kind: "failed", reason: "PAYMENT_FAILED", attempt: 1 });
    const stays = await charges.apply(charge.reference, {
      kind: "authorized",
      authorizationId: randomUUID(),
      orderId: randomUUID(),
      captured: false,
      attempt: 1,
    });
    expect(stays).toMatchObject({ status: "failed" });
    expect(errors).toHaveLength(1);
  });
});

describe("Charges", () => {
  it("an event stored before the create call's answer is applied when the answer arrives", async () => {
    const store = new MemoryChargeStore();
    const applied: string[] = [];
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: {},
      alert: async () => {},
      onEvent: (event) => {
        applied.push(event.type);
      },
    });
    const charge = pendingCharge();
    await store.create(charge);
    const authorizationId = randomUUID();
    const orderId = randomUUID();
    const event = signedEvent("order.captured", {
      orderId,
      authorizationId,
      amount: "49.80",
      currency: "EUR",
      status: "Activated",
    });

    expect(await charges.receiveWebhook(event)).toBe("parked");
    expect(applied).toEqual([]);

    const answered = await charges.apply(charge.reference, { kind: "accepted", authorizationId });

    expect(answered).toMatchObject({ status: "captured", authorizationId, orderId });
    expect(applied).toEqual(["order.captured"]);
    expect(await store.unappliedEvents(authorizationId)).toEqual([]);
    expect(await charges.receiveWebhook(event)).toBe("duplicate");
  });

  it("a stored event whose application failed is applied on the next trigger (a later event, a retry)", async () => {
    const store = new MemoryChargeStore();
    let failOnce = true;
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: {},
      alert: async () => {},
      onEvent: () => {
        if (failOnce) {
          failOnce = false;
          throw new Error("listener down");
        }
      },
    });
    const charge = pendingCharge();
    await store.create(charge);
    const { authorizationId, captured, succeeded } = authorizationEvents(charge.reference);
    // Parked, then its application fails when the answer arrives: it stays stored, unapplied.
    expect(await charges.receiveWebhook(captured)).toBe("parked");
    await charges.apply(charge.reference, { kind: "accepted", authorizationId });
    expect((await store.unappliedEvents(authorizationId)).map((e) => e.id)).toEqual([captured.id]);
    // A later event for the same authorization retries it.
    expect(await charges.receiveWebhook(succeeded)).toBe("applied");
    expect(await store.unappliedEvents(authorizationId)).toEqual([]);
    expect(await store.findByReference(charge.reference)).toMatchObject({ status: "captured" });
  });

  describe("authorization.succeeded matched by reference folds the events parked for its id into its change", () => {
    /** A store whose process dies (every later call throws) once `dies(operation)` says so. */
    function dyingStore(store: MemoryChargeStore, dies: (operation: string, argument: unknown) => boolean) {
      let dead = false;
      const step =
        <A extends unknown[], R>(operation: string, run: (...args: A) => Promise<R>) =>
        async (...args: A): Promise<R> => {
          if (dead) throw new Error("killed");
          const result = await run(...args);
          if (dies(operation, args[0])) dead = true;
          return result;
        };
      const dying: ChargeStore = {
        create: step("create", (charge: ChargeRecord) => store.create(charge)),
        findByReference: step("findByReference", (reference: string) => store.findByReference(reference)),
        findByAuthorizationId: step("findByAuthorizationId", (id: string) => store.findByAuthorizationId(id)),
        recordEvent: step("recordEvent", (event: StoredWebhookEvent) => store.recordEvent(event)),
        markEventApplied: step("markEventApplied", (id: string) => store.markEventApplied(id)),
        compareAndSet: step("compareAndSet", (version: number, next: ChargeRecord) =>
          store.compareAndSet(version, next),
        ),
        unappliedEvents: step("unappliedEvents", (id: string) => store.unappliedEvents(id)),
      };
      return dying;
    }

    async function crashWhileApplying(
      dies: (operation: string, argument: unknown, succeededId: string) => boolean,
    ) {
      const store = new MemoryChargeStore();
      let succeededId = "";
      const options = {
        notifier: new ChargeNotifier(),
        logger: {},
        onEvent: undefined,
        alert: async () => {},
      };
      const charges = new Charges({
        ...options,
        store: dyingStore(store, (operation, argument) => dies(operation, argument, succeededId)),
      });
      const charge = pendingCharge(); // its create call's answer was lost: no authorization id yet
      await store.create(charge);
      const { authorizationId, captured, succeeded } = authorizationEvents(charge.reference);
      expect(await charges.receiveWebhook(captured)).toBe("parked"); // acknowledged: never sent again
      succeededId = succeeded.id;
      await expect(charges.receiveWebhook(succeeded)).rejects.toThrow("killed");
      // The service redelivers what was not acknowledged, to a process that lives.
      const restarted = new Charges({ ...options, store });
      await restarted.receiveWebhook(succeeded);
      return { store, charge, authorizationId };
    }

    it("a crash right after the change is stored loses none of them", async () => {
      const { store, charge, authorizationId } = await crashWhileApplying(
        (operation) => operation === "compareAndSet",
      );
      expect(await store.findByReference(charge.reference)).toMatchObject({
        status: "captured",
        authorizationId,
      });
      expect(await store.unappliedEvents(authorizationId)).toEqual([]);
    });

    it("the event itself is marked applied last: a crash just after leaves nothing unapplied", async () => {
      const { store, charge, authorizationId } = await crashWhileApplying(
        (operation, argument, succeededId) => operation === "markEventApplied" && argument === succeededId,
      );
      expect(await store.findByReference(charge.reference)).toMatchObject({
        status: "captured",
        authorizationId,
      });
      expect(await store.unappliedEvents(authorizationId)).toEqual([]);
    });
  });

  it("the memory store forgets applied events first; an unapplied one survives the bound", async () => {
    const store = new MemoryChargeStore({ maxEvents: 2 });
    const authorizationId = randomUUID();
    const stored = (id: string) => ({
      id,
      authorizationId,
      event: { id, type: "order.captured" } as never,
      receivedAt: NOW.toISOString(),
    });
    await store.recordEvent(stored("unapplied"));
    await store.recordEvent(stored("a"));
    await store.markEventApplied("a");
    await store.recordEvent(stored("b"));
    expect((await store.unappliedEvents(authorizationId)).map((e) => e.id)).toEqual(["unapplied", "b"]);
  });

  it("concurrent news from many writers all land (compare-and-set retries)", async () => {
    const store = new MemoryChargeStore();
    const charges = new Charges({
      store,
      notifier: new ChargeNotifier(),
      logger: {},
      onEvent: undefined,
      alert: async () => {},
    });
    const charge = pendingCharge({
      status: "authorized",
      authorizationId: randomUUID(),
      orderId: randomUUID(),
    });
    await store.create(charge);
    await Promise.all(
      (["capture", "cancel", "refund"] as const).flatMap((operation) =>
        [1, 2, 3].map((sequence) =>
          charges.apply(charge.reference, { kind: "operation", operation, sequence }),
        ),
      ),
    );
    expect((await store.findByReference(charge.reference))!.operations).toEqual({
      capture: 3,
      cancel: 3,
      refund: 3,
    });
  });
});
