import { randomUUID } from "node:crypto";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryChargeStore } from "../src/index.js";
import { chargesOn, pendingCharge } from "./support/charges-kit.js";
import { charge, createShopData, startShopApp } from "./support/shop.js";

// Applying the create call's answer to the charge the request just stored and sent: that copy is
// the compare-and-set's first guess, so a charge nobody else touched is not read back (one
// PostgreSQL query less per charge). A stale guess must never decide anything.

/** A memory store that counts the charge reads. */
class CountingStore extends MemoryChargeStore {
  reads = 0;
  override async findByReference(reference: string) {
    this.reads++;
    return super.findByReference(reference);
  }
}

const ORDER = { amount: "49.80", currency: "EUR", captureMode: "Auto" } as const;

describe("the caller's copy as the first guess", () => {
  it("an untouched charge takes the answer without being read again", async () => {
    const { store, charges } = chargesOn(new CountingStore());
    const { charge: stored } = await store.create(pendingCharge());
    const authorizationId = randomUUID();
    const orderId = randomUUID();

    const { charge: updated } = await charges.applyTo(stored, {
      kind: "authorized",
      authorizationId,
      orderId,
      captured: true,
      attempt: 1,
    });

    expect(updated).toMatchObject({ status: "captured", authorizationId, orderId, version: 2 });
    expect(store.reads).toBe(0);
  });

  it("a guess that another writer overtook loses the compare-and-set, and the news lands on the charge as stored", async () => {
    const { store, charges } = chargesOn(new CountingStore());
    const { charge: stale } = await store.create(pendingCharge());
    const authorizationId = randomUUID();
    const orderId = randomUUID();
    // A webhook got there first: authorized (manual news), version 2.
    await charges.apply(stale.reference, { kind: "authorized", authorizationId, orderId, captured: false });

    const { charge: updated } = await charges.applyTo(stale, {
      kind: "order",
      authorizationId,
      orderId,
      orderStatus: "Activated",
    });

    expect(updated).toMatchObject({ status: "captured", authorizationId, version: 3 });
    expect(await store.findByReference(stale.reference)).toEqual(updated);
  });

  it("a stale guess on which the news changes nothing proves nothing: the charge is read and the news applied to it", async () => {
    const { store, charges } = chargesOn(new CountingStore());
    const { charge: created } = await store.create(pendingCharge());
    await charges.apply(created.reference, { kind: "failed", reason: "PAYMENT_DENIED", attempt: 1 });
    // Attempt 1 as it was stored when it failed: the guess a late caller still holds.
    const attemptOne = (await store.findByReference(created.reference))!;
    await charges.startNextAttempt(created.reference, ORDER);

    // News for attempt 2 changes nothing on attempt 1's copy, but fails attempt 2 as stored.
    const { charge: updated } = await charges.applyTo(attemptOne, {
      kind: "failed",
      reason: "PAYMENT_DENIED",
      attempt: 2,
    });

    expect(updated).toMatchObject({ attempt: 2, status: "failed", reason: "PAYMENT_DENIED" });
  });
});

describe("POST /charges over HTTP", () => {
  let sandbox: SandboxServer;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox.close());

  it("a new charge answered at once is stored and updated without reading it back", async () => {
    const data = createShopData(sandbox);
    const store = new CountingStore();
    const app = await startShopApp(data, { store, receiveWebhooks: false });
    try {
      const customer = data.customer();
      const cartId = data.cart(customer, [{ sku: "grinder", quantity: 1 }]);

      const reply = await charge(app, customer, { cartId });

      expect(reply.status).toBe(201);
      expect(reply.json.status).toBe("captured");
      expect(store.reads).toBe(0);
      expect(await store.findByReference(data.referenceOf(cartId))).toMatchObject({
        status: "captured",
        authorizationId: reply.json.authorizationId,
        version: 2,
      });
    } finally {
      await app.close();
    }
  });
});
