import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { BatchItemRecord, PostgresBatchStore } from "../src/index.js";
import { shopEnv, spawnCli, startCli, tempFile } from "./support/cli.js";
import { freshDatabase } from "./support/database.js";
import {
  cents,
  chargeItem,
  chargesByItem,
  injectFaults,
  openShop,
  type Shop,
  sandboxRecords,
} from "./support/sandbox.js";

// The crash proof, Jepsen-style: 2,000 charges through the CLI in a child process with the
// PostgreSQL store, ~40 % of the service's answers broken by injected faults. The child is
// SIGKILLed in the middle, started again with the same batch id, SIGKILLed again, and started a
// third time. Then the runner's records are checked against the sandbox's own: nobody charged
// twice, nobody lost, the report equal to the cent.

const ITEMS = 2_000;
const BATCH_ID = "renewals-2026-12";
/** The first run is killed once this many items are final, the second once this many more are. */
const KILLS_AT_FINAL = [600, 1_300];

// Sequential draws: about 40 % of the create calls hit one of these.
const FAULTS = [
  { kind: "unavailable", probability: 0.08 },
  { kind: "drop_after_commit", probability: 0.1 },
  { kind: "gateway_error", status: 502, phase: "after_commit", probability: 0.06 },
  { kind: "gateway_error", status: 504, phase: "before_commit", probability: 0.04 },
  { kind: "rate_limited", retryAfterSeconds: 0, probability: 0.06 },
  { kind: "garbled_success", body: "garbled", probability: 0.06 },
  { kind: "reset_before_processing", probability: 0.04 },
];

let shop: Shop;
let database: Awaited<ReturnType<typeof freshDatabase>>;
beforeAll(async () => {
  shop = await openShop({}, 4242);
  database = await freshDatabase();
});
afterAll(async () => {
  await shop.sandbox.close();
  await database.drop();
});

/** The expected end of each item, by how its customer token behaves at the sandbox. */
function kindOf(i: number): { token: Parameters<Shop["token"]>[0]; end: string } {
  if (i % 20 === 1) return { token: { status: "Revoked" }, end: "declined:TOKEN_REVOKED" };
  if (i % 40 === 2) return { token: { funds: "0.50" }, end: "declined:PAYMENT_METHOD_NO_FUNDS" };
  if (i % 40 === 3) return { token: { failureReason: "PAYMENT_FAILED" }, end: "declined:PAYMENT_FAILED" };
  if (i % 20 === 4) return { token: { failNextAttempts: ["PAYMENT_FAILED"] }, end: "charged" };
  return { token: {}, end: "charged" };
}

it(`a batch of ${ITEMS} charges with faults, SIGKILLed twice and resumed, charges everyone at most once and loses no one`, async () => {
  const expected = new Map<string, { end: string; cents: bigint }>();
  const lines: string[] = [];
  for (let i = 0; i < ITEMS; i++) {
    const itemId = `renewal-${i}`;
    const kind = kindOf(i);
    const amount = `${(i % 50) + 1}.${String(i % 100).padStart(2, "0")}`;
    expected.set(itemId, { end: kind.end, cents: cents(amount) });
    lines.push(JSON.stringify(chargeItem(itemId, shop.token(kind.token), amount)));
  }
  const file = tempFile("renewals.jsonl", `${lines.join("\n")}\n`);
  await injectFaults(shop, FAULTS);

  const args = [
    file,
    "--batch-id",
    BATCH_ID,
    "--postgres",
    database.url,
    "--concurrency",
    "16",
    "--retry-delays",
    "0,0",
    "--unknown-retry-delay",
    "20",
    "--json",
  ];
  const env = shopEnv(shop);

  // Two runs killed without warning once enough items are final, with calls in flight.
  const kills: Array<{ final: number; inFlight: number }> = [];
  for (const threshold of KILLS_AT_FINAL) {
    const run = spawnCli(args, env);
    const atKill = await killWhenFinal(database.store, run, threshold);
    const killed = await run.done;
    expect(killed.signal).toBe("SIGKILL");
    expect(killed.report).toBeUndefined();
    expect(atKill.final).toBeGreaterThanOrEqual(threshold);
    expect(atKill.final).toBeLessThan(ITEMS);
    kills.push(atKill);
  }

  // A third run, same batch id, the faults still on, finishes the batch.
  const last = await startCli(args, env);
  expect(last.code, last.stderr).toBe(0);
  const report = last.report!;

  // The runner's records.
  const records: BatchItemRecord[] = [];
  for await (const record of database.store.items(BATCH_ID)) records.push(record);
  expect(records).toHaveLength(ITEMS);

  // The sandbox's records, over its control routes.
  const sandbox = await sandboxRecords(shop);
  const byItem = chargesByItem(sandbox);
  const keysOf = new Map<string, string[]>();
  for (const authorization of sandbox.authorizations) {
    const keys = keysOf.get(authorization.reference!) ?? [];
    keys.push(authorization.idempotencyKey!);
    keysOf.set(authorization.reference!, keys);
  }

  let chargedCents = 0n;
  const declinedByReason: Record<string, number> = {};
  for (const record of records) {
    const want = expected.get(record.itemId)!;
    const atSandbox = byItem.get(record.itemId) ?? {
      succeeded: 0,
      captures: 0,
      capturedCents: 0n,
      authorizationIds: [],
    };
    // At most once: never two successful authorizations nor two captures for one item.
    expect(atSandbox.succeeded, record.itemId).toBeLessThanOrEqual(1);
    expect(atSandbox.captures, record.itemId).toBeLessThanOrEqual(1);
    // One authorization per attempt at most, each with a key of its own.
    const keys = keysOf.get(record.itemId) ?? [];
    expect(new Set(keys).size, record.itemId).toBe(keys.length);
    expect(keys.length, record.itemId).toBeLessThanOrEqual(record.attempt);
    // None lost: every item ended as its token says, and the record agrees with the sandbox.
    const end = record.status === "declined" ? `declined:${record.reason}` : record.status;
    expect(end, record.itemId).toBe(want.end);
    if (record.status === "charged") {
      expect(atSandbox).toMatchObject({ succeeded: 1, captures: 1, capturedCents: want.cents });
      expect(atSandbox.authorizationIds).toContain(record.result?.authorizationId);
      chargedCents += atSandbox.capturedCents;
    } else {
      expect(atSandbox, record.itemId).toMatchObject({ succeeded: 0, captures: 0 });
      declinedByReason[record.reason!] = (declinedByReason[record.reason!] ?? 0) + 1;
    }
  }

  // The report equals the sandbox: counts, reasons, and money to the cent.
  const succeededAtSandbox = sandbox.authorizations.filter((a) => a.status === "Succeeded").length;
  const capturedAtSandbox = sandbox.orders
    .flatMap((order) => order.operations)
    .filter((operation) => operation.type === "capture")
    .reduce((sum, operation) => sum + cents(operation.amount), 0n);
  const wantCharged = [...expected.values()].filter((want) => want.end === "charged");
  expect(report).toMatchObject({ total: ITEMS, complete: true, unknown: 0, pending: 0, retryScheduled: 0 });
  expect(report.needsReview.total).toBe(0);
  expect(report.charged).toBe(wantCharged.length);
  expect(report.charged).toBe(succeededAtSandbox);
  expect(report.declined.byReason).toEqual(declinedByReason);
  expect(capturedAtSandbox).toBe(chargedCents);
  expect(capturedAtSandbox).toBe(wantCharged.reduce((sum, want) => sum + want.cents, 0n));
  // The faults did fire, and the kill did cut calls in flight (written ahead, answer not stored).
  expect(shop.sandbox.stats().requests).toBeGreaterThan(ITEMS * 1.2);
  for (const atKill of kills) expect(atKill.inFlight).toBeGreaterThan(0);
}, 150_000);

/** Polls the store; SIGKILLs the child once `final` items are final. Returns what the store held then. */
async function killWhenFinal(
  store: PostgresBatchStore,
  child: ReturnType<typeof spawnCli>,
  final: number,
): Promise<{ final: number; inFlight: number }> {
  let exited = false;
  void child.done.then(() => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error("the run ended before it could be killed");
    const counts = await store.counts(BATCH_ID);
    const open =
      counts.byStatus.pending +
      counts.byStatus.sending +
      counts.byStatus.unknown +
      counts.byStatus.retry_scheduled;
    if (counts.total > 0 && counts.total - open >= final) break;
    await sleep(25);
  }
  child.kill("SIGKILL");
  await child.done;
  const counts = await store.counts(BATCH_ID);
  const open =
    counts.byStatus.pending +
    counts.byStatus.sending +
    counts.byStatus.unknown +
    counts.byStatus.retry_scheduled;
  return { final: counts.total - open, inFlight: counts.byStatus.sending };
}
