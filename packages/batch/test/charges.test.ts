import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BatchStore, type ChargeItem, runBatch } from "../src/index.js";
import {
  cents,
  chargeItem,
  chargesByItem,
  clearFaults,
  injectFaults,
  openShop,
  type Shop,
  sandboxRecords,
} from "./support/sandbox.js";
import { STORES } from "./support/stores.js";

// A batch against the real sandbox over HTTP, with each store: everyone is charged exactly once,
// and what the summary says is what the sandbox holds.

describe.each(STORES)("a batch with the $name store", ({ open }) => {
  let shop: Shop;
  let store: BatchStore;
  beforeAll(async () => {
    shop = await openShop();
    store = await open();
  });
  afterAll(() => shop.sandbox.close());

  it("charges every item exactly once, and a second run of the same batch sends nothing", async () => {
    const items: ChargeItem[] = Array.from({ length: 60 }, (_, i) =>
      chargeItem(`once-${i}`, shop.token(), `${i + 1}.${String(i % 100).padStart(2, "0")}`),
    );
    const first = await runBatch({ client: shop.client, store, batchId: "once", items, concurrency: 6 });
    expect(first).toMatchObject({ total: 60, charged: 60, unknown: 0, pending: 0, complete: true, sent: 60 });

    const again = await runBatch({ client: shop.client, store, batchId: "once", items, concurrency: 6 });
    expect(again).toMatchObject({ total: 60, charged: 60, complete: true, sent: 0 });

    const byItem = chargesByItem(await sandboxRecords(shop));
    let expectedCents = 0n;
    for (const item of items) {
      const charges = byItem.get(item.itemId);
      expect(charges, item.itemId).toMatchObject({ succeeded: 1, captures: 1 });
      const itemCents = cents(String(item.order.items[0]!.unitPrice));
      expect(charges!.capturedCents, item.itemId).toBe(itemCents);
      expectedCents += itemCents;
    }
    const total = [...byItem.entries()]
      .filter(([itemId]) => itemId.startsWith("once-"))
      .reduce((sum, [, charges]) => sum + charges.capturedCents, 0n);
    expect(total).toBe(expectedCents);
  });

  it("ends declines by reason; PAYMENT_FAILED and SERVICE_UNAVAILABLE become new attempts with new keys", async () => {
    const items = [
      chargeItem("decl-revoked", shop.token({ status: "Revoked" })),
      chargeItem("decl-nofunds", shop.token({ funds: "1.00" })),
      chargeItem("decl-denied", shop.token({ failureReason: "PAYMENT_DENIED" })),
      chargeItem("decl-failed-then-ok", shop.token({ failNextAttempts: ["PAYMENT_FAILED"] })),
      chargeItem(
        "decl-unavail-twice-then-ok",
        shop.token({ failNextAttempts: ["SERVICE_UNAVAILABLE", "PAYMENT_FAILED"] }),
      ),
      chargeItem("decl-failed-always", shop.token({ failureReason: "PAYMENT_FAILED" })),
      chargeItem("decl-ok", shop.token()),
    ];
    const result = await runBatch({
      client: shop.client,
      store,
      batchId: "declines",
      items,
      declinePolicy: { retryDelaysMs: [5, 5] },
    });
    expect(result).toMatchObject({
      total: 7,
      charged: 3,
      declined: {
        total: 4,
        byReason: { TOKEN_REVOKED: 1, PAYMENT_METHOD_NO_FUNDS: 1, PAYMENT_DENIED: 1, PAYMENT_FAILED: 1 },
      },
      unknown: 0,
      complete: true,
    });

    const records = await sandboxRecords(shop);
    const byItem = chargesByItem(records);
    const keysAtSandbox = (itemId: string) =>
      records.authorizations.filter((a) => a.reference === itemId).map((a) => a.idempotencyKey);
    const expectedAttempts: Record<string, number> = {
      "decl-nofunds": 1,
      "decl-denied": 1,
      "decl-failed-then-ok": 2,
      "decl-unavail-twice-then-ok": 3,
      "decl-failed-always": 3, // the first attempt and the two retries the policy allows
      "decl-ok": 1,
    };
    for (const [itemId, attempts] of Object.entries(expectedAttempts)) {
      const record = (await store.get("declines", itemId))!;
      expect(record.attempt, itemId).toBe(attempts);
      const keys = keysAtSandbox(itemId);
      expect(keys, itemId).toHaveLength(attempts);
      expect(new Set(keys).size, `${itemId}: every attempt has its own key`).toBe(attempts);
      expect(new Set(record.log.map((entry) => entry.idempotencyKey))).toEqual(new Set(keys));
      expect(byItem.get(itemId)!.succeeded, itemId).toBe(itemId.endsWith("ok") ? 1 : 0);
    }
    // A revoked token is refused before an authorization exists; it was asked once.
    expect(keysAtSandbox("decl-revoked")).toHaveLength(0);
    expect((await store.get("declines", "decl-revoked"))!).toMatchObject({
      status: "declined",
      reason: "TOKEN_REVOKED",
      attempt: 1,
    });
  });

  it("resends an unknown outcome with the same key, and the service answers the first outcome", async () => {
    // No retries inside core: each lost answer reaches the runner as an unknown outcome.
    const { PurchaseAuthClient } = await import("@purchase-auth/core");
    const client = new PurchaseAuthClient({ ...shop.credentials, maxRetries: 0 });
    await injectFaults(shop, [
      { kind: "drop_after_commit", count: 2 },
      { kind: "gateway_error", status: 502, phase: "after_commit", count: 1 },
      { kind: "garbled_success", body: "garbled", count: 1 },
    ]);
    const items = [chargeItem("lost-answer", shop.token())];
    try {
      const result = await runBatch({ client, store, batchId: "unknown", items, unknownRetryDelayMs: 5 });
      expect(result).toMatchObject({ total: 1, charged: 1, unknown: 0, complete: true });
      // Four lost answers; core may repeat one on its own (a reset of a reused socket), the rest
      // reach the runner as unknown outcomes and are resent.
      expect(result.sent).toBeGreaterThanOrEqual(3);
    } finally {
      await clearFaults(shop);
    }
    const record = (await store.get("unknown", "lost-answer"))!;
    const outcomes = record.log.map((entry) => entry.outcome);
    expect(outcomes.at(-1)).toBe("done");
    expect(outcomes.slice(0, -1).every((outcome) => outcome === "unknown")).toBe(true);
    expect(outcomes.length).toBeGreaterThanOrEqual(3);
    expect(new Set(record.log.map((entry) => entry.idempotencyKey)).size).toBe(1);
    const records = await sandboxRecords(shop);
    const authorizations = records.authorizations.filter((a) => a.reference === "lost-answer");
    expect(authorizations).toHaveLength(1);
    expect(authorizations[0]!.idempotencyKey).toBe(record.idempotencyKey);
    expect(record.result?.authorizationId).toBe(authorizations[0]!.authorizationId);
    expect(chargesByItem(records).get("lost-answer")).toMatchObject({ succeeded: 1, captures: 1 });
  });

  // With PostgresBatchStore an item whose attemptSchedule.absolute held a Date came back from jsonb
  // as "…T…:…:….000Z", which core's time rule refuses: the item was reported rejected
  // (INVALID_REQUEST) and never sent, although it was valid. Dates are now stored in the wire format.
  it("sends an item with Dates in its absolute schedule, and takes it again with the same Dates", async () => {
    const at = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_123);
    const item: ChargeItem = {
      ...chargeItem("absolute-date", shop.token(), "12.00"),
      attemptSchedule: { absolute: [at] },
    };
    const result = await runBatch({ client: shop.client, store, batchId: "absolute", items: [item] });
    expect(result).toMatchObject({ total: 1, accepted: 1, rejected: { total: 0 }, sent: 1 });
    const record = (await store.get("absolute", "absolute-date"))!;
    expect(record).toMatchObject({ status: "accepted", result: { synchronous: false } });
    expect(record.item.attemptSchedule).toEqual({ absolute: [`${at.toISOString().slice(0, 19)}+00:00`] });
    const authorizations = (await sandboxRecords(shop)).authorizations.filter(
      (authorization) => authorization.reference === "absolute-date",
    );
    expect(authorizations).toHaveLength(1);

    // The same item registered again, with a new Date object of the same time: the same charge.
    const again = { ...item, attemptSchedule: { absolute: [new Date(at.getTime())] } };
    const rerun = await runBatch({ client: shop.client, store, batchId: "absolute", items: [again] });
    expect(rerun).toMatchObject({ total: 1, accepted: 1, sent: 0 });
  });

  // An abort (SIGINT in the CLI) while the rate limiter held items back made runBatch reject with
  // the limiter's AbortError: no report, and the CLI said "the run failed". It is "not sent" now.
  it("an abort while rate-limited ends the run with its report; a resume charges the rest", async () => {
    const items = Array.from({ length: 6 }, (_, i) => chargeItem(`rate-${i}`, shop.token(), "3.00"));
    const stop = new AbortController();
    const options = { client: shop.client, store, batchId: "rate-abort", concurrency: 2 };
    // One start every 2 s: the first item is charged at once, the second waits for the limiter.
    const stopped = await runBatch({
      ...options,
      items,
      ratePerSecond: 0.5,
      signal: stop.signal,
      onItem: (record) => record.status === "charged" && stop.abort(),
    });
    expect(stopped).toMatchObject({ total: 6, charged: 1, pending: 5, unknown: 0, complete: false, sent: 1 });
    const resumed = await runBatch(options);
    expect(resumed).toMatchObject({ total: 6, charged: 6, complete: true, sent: 5 });
    const charges = chargesByItem(await sandboxRecords(shop));
    for (const item of items) expect(charges.get(item.itemId)).toMatchObject({ succeeded: 1 });
  });

  it("never resends an unknown outcome past its key's window: it ends needing review", async () => {
    let offsetMs = 0;
    const { PurchaseAuthClient } = await import("@purchase-auth/core");
    const client = new PurchaseAuthClient({
      ...shop.credentials,
      maxRetries: 0,
      now: () => Date.now() + offsetMs,
    });
    const clock = { now: () => new Date(Date.now() + offsetMs) };
    const items = [chargeItem("too-late", shop.token())];
    await injectFaults(shop, [{ kind: "drop_after_commit", count: 5 }]);
    try {
      const first = await runBatch({
        client,
        store,
        batchId: "late",
        items,
        unknownRetryDelayMs: 60_000,
        waitUpToMs: 0,
        ...clock,
      });
      expect(first).toMatchObject({ unknown: 1, complete: false });
    } finally {
      await clearFaults(shop);
    }

    // Two hours later, here and at the service: the key is past its one-hour window.
    offsetMs = 2 * 3_600_000;
    shop.sandbox.advanceClock(offsetMs);
    const requestsBefore = shop.sandbox.stats().requests;
    const later = await runBatch({ client, store, batchId: "late", ...clock });
    expect(later).toMatchObject({
      unknown: 0,
      complete: true,
      sent: 0, // core refused to send the old key
      needsReview: { total: 1, byReason: { IDEMPOTENCY_WINDOW_PASSED: 1 } },
    });
    expect(shop.sandbox.stats().requests).toBe(requestsBefore);
    const record = (await store.get("late", "too-late"))!;
    expect(record.log.at(-1)).toMatchObject({
      outcome: "window_passed",
      idempotencyKey: record.idempotencyKey,
    });
    // Why a person must look: the lost answer was a charge.
    expect(chargesByItem(await sandboxRecords(shop)).get("too-late")).toMatchObject({
      succeeded: 1,
      captures: 1,
    });

    // And it stays so: a further run sends nothing.
    const again = await runBatch({ client, store, batchId: "late", ...clock });
    expect(again).toMatchObject({ sent: 0, needsReview: { total: 1 } });
  });
});
