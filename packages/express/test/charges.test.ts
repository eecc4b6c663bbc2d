import { randomUUID } from "node:crypto";
import { signWebhook, verifyWebhook } from "@purchase-auth/core";
import { describe, expect, it } from "vitest";
import { Charges } from "../src/charges/charges.js";
import { ChargeNotifier } from "../src/charges/notifier.js";
import { advance, CHARGE_STATUSES, canMove, startNextAttempt } from "../src/charges/state-machine.js";
import { type ChargeRecord, MemoryChargeStore } from "../src/index.js";

// The state machine and the bookkeeping on top of it, without HTTP: the rules every route relies on.

function pendingCharge(overrides: Partial<ChargeRecord> = {}): ChargeRecord {
  const now = new Date().toISOString();
  return {
    reference: `order-${randomUUID().slice(0, 8)}`,
    customerId: "customer-1",
    attempt: 1,
    status: "pending",
    amount: "49.80",
    currency: "EUR",
    captureMode: "Auto",
    operations: { capture: 0, cancel: 0, refund: 0 },
    version: 1,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
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

  it("ignores news about another attempt's authorization", () => {
    const charge = pendingCharge({ authorizationId: randomUUID() });
    expect(
      advance(charge, { kind: "failed", authorizationId: randomUUID(), reason: "PAYMENT_DENIED" }, NOW),
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
      reason: undefined,
      version: 2,
      updatedAt: NOW.toISOString(),
    });
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
      onEvent: (event) => {
        applied.push(event.type);
      },
    });
    const charge = pendingCharge();
    await store.create(charge);
    const authorizationId = randomUUID();
    const orderId = randomUUID();
    const signed = signWebhook(
      {
        type: "order.captured",
        data: { orderId, authorizationId, amount: "49.80", currency: "EUR", status: "Activated" },
      },
      "secret",
    );
    const event = verifyWebhook(signed.body, signed.headers, "secret");

    expect(await charges.receiveWebhook(event)).toBe("parked");
    expect(applied).toEqual([]);

    const answered = await charges.apply(charge.reference, { kind: "accepted", authorizationId });

    expect(answered).toMatchObject({ status: "captured", authorizationId, orderId });
    expect(applied).toEqual(["order.captured"]);
    expect(await store.unappliedEvents(authorizationId)).toEqual([]);
    expect(await charges.receiveWebhook(event)).toBe("duplicate");
  });

  it("concurrent news from many writers all land (compare-and-set retries)", async () => {
    const store = new MemoryChargeStore();
    const charges = new Charges({ store, notifier: new ChargeNotifier(), logger: {}, onEvent: undefined });
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
