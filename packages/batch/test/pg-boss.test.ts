import { PurchaseAuthClient } from "@purchase-auth/core";
import { expect, it } from "vitest";
import { PgBossBatchQueue } from "../src/index.js";
import { pgBossWorld } from "./support/pg-boss-world.js";
import {
  cents,
  chargeItem,
  chargesByItem,
  clearFaults,
  FAST_RETRIES,
  injectFaults,
  sandboxRecords,
} from "./support/sandbox.js";

// Scale-out on pg-boss: two workers (each with its own pg-boss instance and client, as two
// processes would have) share one batch on a real PostgreSQL, with faults on the service.

const world = pgBossWorld(7);

async function worker(): Promise<PgBossBatchQueue> {
  const boss = await world.startedBoss();
  return new PgBossBatchQueue({
    boss,
    store: world.database.store,
    client: new PurchaseAuthClient({ ...world.shop.credentials, ...FAST_RETRIES }),
    declinePolicy: { retryDelaysMs: [0] },
    unknownRetryDelayMs: 0,
  });
}

it("two pg-boss workers charge a batch exactly once, with faults, and the summary equals the sandbox", async () => {
  const items = Array.from({ length: 120 }, (_, i) =>
    chargeItem(
      `boss-${i}`,
      i % 10 === 0
        ? world.shop.token({ status: "Revoked" })
        : i % 10 === 1
          ? world.shop.token({ failNextAttempts: ["PAYMENT_FAILED"] })
          : world.shop.token(),
      `${i + 1}.00`,
    ),
  );
  await injectFaults(world.shop, [
    { kind: "drop_after_commit", probability: 0.15 },
    { kind: "gateway_error", status: 502, phase: "after_commit", probability: 0.1 },
    { kind: "unavailable", probability: 0.1 },
  ]);
  try {
    const producer = await worker();
    const consumer = await worker();
    expect(await producer.enqueue("boss-batch", items)).toEqual({ queued: 120 });
    await producer.work({ concurrency: 4, pollingIntervalSeconds: 0.5 });
    await consumer.work({ concurrency: 4, pollingIntervalSeconds: 0.5 });
    const summary = await producer.waitFor("boss-batch", { pollMs: 200 });
    expect(summary).toMatchObject({
      total: 120,
      charged: 108,
      declined: { total: 12, byReason: { TOKEN_REVOKED: 12 } },
      unknown: 0,
      complete: true,
    });
  } finally {
    await clearFaults(world.shop);
  }

  const byItem = chargesByItem(await sandboxRecords(world.shop));
  let expectedCents = 0n;
  let capturedCents = 0n;
  for (const [i, item] of items.entries()) {
    const charges = byItem.get(item.itemId);
    if (i % 10 === 0) {
      expect(charges, item.itemId).toBeUndefined();
      continue;
    }
    expect(charges, item.itemId).toMatchObject({ succeeded: 1, captures: 1 });
    expectedCents += cents(`${i + 1}.00`);
    capturedCents += charges!.capturedCents;
    const record = (await world.database.store.get("boss-batch", item.itemId))!;
    expect(record.attempt, item.itemId).toBe(i % 10 === 1 ? 2 : 1);
    expect(charges!.authorizationIds).toContain(record.result?.authorizationId);
  }
  expect(capturedCents).toBe(expectedCents);
}, 90_000);
