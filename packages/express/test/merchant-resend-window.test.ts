import { afterEach, describe, expect, it } from "vitest";
import { advance } from "../src/charges/state-machine.js";
import type { PaymentAlert } from "../src/reconcile/alerts.js";
import { operationFingerprint } from "../src/routes/merchant.js";
import type { ChargeRecord, OperationRecord } from "../src/stores/types.js";
import { authorizedCharge as authorizedRecord } from "./support/charges-kit.js";
import { call, charge, staffOnly, useShops } from "./support/shop.js";

// A merchant write is sent again only while the service remembers its key: it replays a key's answer
// for an hour and forgets the key after 24. A capture or refund resent after that would be a new
// write (money moved twice), and a refusal of it says nothing about the first send. Past the window
// the operation log answers: done stays done, refused stays refused, unknown is an alert.

const shops = useShops();
afterEach(() => shops.sandbox().clearFaults());
const HOUR = 3_600_000;
const MINUTE = 60_000;

/** A manual-capture charge of 2 × 24.90 = 49.80 on a shop whose clock is the sandbox's. */
async function authorizedCharge() {
  const sandbox = shops.sandbox();
  const alerts: PaymentAlert[] = [];
  const { data, app } = await shops.shop({
    authorizeMerchant: staffOnly,
    captureMode: "Manual",
    now: () => sandbox.now(),
    onAlert: (alert) => {
      alerts.push(alert);
    },
  });
  const customer = data.customer();
  const reply = await charge(app, customer, { cartId: data.cart(customer) });
  expect(reply.json.status).toBe("authorized");
  const id: string = reply.json.authorizationId;
  const merchant = (path: string, body: unknown) =>
    call(app, "POST", `/charges/${id}/${path}`, { merchant: true, body });
  const moves = (type: string) =>
    sandbox
      .orders({ authorizationId: id })[0]!
      .operations.filter((operation) => operation.type === type)
      .map((operation) => operation.amount);
  const logEntry = async (key: string) =>
    (await app.router.store.findByAuthorizationId(id))?.operationLog?.[key];
  return { sandbox, id, merchant, moves, logEntry, alerts, store: app.router.store };
}

/** A capture of 10.00 (sequence p1) that reaches the service but whose answer is lost. */
async function lostCapture(world: Awaited<ReturnType<typeof authorizedCharge>>) {
  world.sandbox.injectFault({
    kind: "drop_after_commit",
    match: { method: "POST", path: "/manage/orders" },
    count: null,
  });
  const lost = await world.merchant("capture", { amount: "10.00", sequence: "p1" });
  world.sandbox.clearFaults();
  expect(lost.status).toBe(503);
  expect(world.moves("capture")).toEqual(["10.00"]);
}

/** Sends the lost capture p1 again `ms` later: a 409 unconfirmed, nothing sent. */
async function expectUnconfirmedAfter(world: Awaited<ReturnType<typeof authorizedCharge>>, ms: number) {
  world.sandbox.advanceClock(ms);
  const again = await world.merchant("capture", { amount: "10.00", sequence: "p1" });
  expect(again.status).toBe(409);
  expect(again.json.type).toBe("urn:purchase-auth:problem:operation-unconfirmed");
}

describe("merchant writes past the service's idempotency window", () => {
  it("a capture whose answer was lost, resent after the key is forgotten, is never sent again: 409 unconfirmed and one alert", async () => {
    const world = await authorizedCharge();
    await lostCapture(world);
    await expectUnconfirmedAfter(world, 25 * HOUR);
    // Before: sent as a new write, 10.00 captured twice.
    expect(world.moves("capture")).toEqual(["10.00"]);
    expect((await world.logEntry("capture:p1"))?.state).toBe("unconfirmed");
    expect(world.alerts).toEqual([
      expect.objectContaining({ kind: "needs_review", authorizationId: world.id }),
    ]);
    // Asked again: the same answer, no second alert.
    expect((await world.merchant("capture", { amount: "10.00", sequence: "p1" })).status).toBe(409);
    expect(world.alerts).toHaveLength(1);
  });

  it("the same after the rest was captured: unconfirmed, not 'refused' about money that moved", async () => {
    const world = await authorizedCharge();
    await lostCapture(world);
    expect((await world.merchant("capture", { sequence: "rest" })).json.order.status).toBe("Activated");
    world.sandbox.advanceClock(25 * HOUR);
    const again = await world.merchant("capture", { amount: "10.00", sequence: "p1" });
    expect(again.json.type).toBe("urn:purchase-auth:problem:operation-unconfirmed");
    expect(world.moves("capture")).toEqual(["10.00", "39.80"]);
  });

  it("between the replay hour and the key's end, a lost capture's resend is 409 unconfirmed, not a 500", async () => {
    const world = await authorizedCharge();
    await lostCapture(world);
    await expectUnconfirmedAfter(world, 2 * HOUR);
    expect(world.moves("capture")).toEqual(["10.00"]);
  });

  it("a capture and a refund answered done, sent again a day later, are answered done from the log and move nothing", async () => {
    const world = await authorizedCharge();
    expect((await world.merchant("capture", { amount: "20.00", sequence: "c1" })).status).toBe(200);
    expect((await world.merchant("refund", { amount: "5.00", sequence: "r1" })).status).toBe(200);
    world.sandbox.advanceClock(25 * HOUR);
    const capture = await world.merchant("capture", { amount: "20.00", sequence: "c1" });
    expect(capture.json).toMatchObject({ operation: { sequence: "c1", outcome: "done" } });
    expect(capture.json.order.capturedAmount).toBe("20.00");
    const refund = await world.merchant("refund", { amount: "5.00", sequence: "r1" });
    expect(refund.json).toMatchObject({ operation: { sequence: "r1", outcome: "done" } });
    expect(world.moves("capture")).toEqual(["20.00"]);
    expect(world.moves("refund")).toEqual(["5.00"]);
    expect(world.alerts).toEqual([]);
  });

  it("a refund refused before anything was captured, sent again a day later, stays refused: it never refunds", async () => {
    const world = await authorizedCharge();
    const early = await world.merchant("refund", { amount: "5.00", sequence: "r-early" });
    expect(early.json.reason).toBe("INVALID_ORDER_STATE");
    expect((await world.merchant("capture", { sequence: "all" })).json.order.status).toBe("Activated");
    world.sandbox.advanceClock(25 * HOUR);
    const again = await world.merchant("refund", { amount: "5.00", sequence: "r-early" });
    expect(again.status).toBe(409);
    expect(again.json.type).toBe("urn:purchase-auth:problem:operation-refused");
    // Before: the forgotten key made it a new refund, of a press the back office was told was refused.
    expect(world.moves("refund")).toEqual([]);
  });

  it("a capture of the rest with its own sequence, its answer lost, pressed again a day later: already done, no alert", async () => {
    const world = await authorizedCharge();
    world.sandbox.injectFault({
      kind: "drop_after_commit",
      match: { method: "POST", path: "/manage/orders" },
      count: null,
    });
    expect((await world.merchant("capture", { sequence: "rest-1" })).status).toBe(503);
    world.sandbox.clearFaults();
    world.sandbox.advanceClock(25 * HOUR);
    const again = await world.merchant("capture", { sequence: "rest-1" });
    expect(again.json).toMatchObject({
      operation: { outcome: "already_done" },
      order: { status: "Activated" },
    });
    expect(world.moves("capture")).toEqual(["49.80"]);
    expect(world.alerts).toEqual([]);
  });

  it("an entry stored before firstSentAt existed is never sent again: its age is unknown, and it is decided only timeoutMs after the charge last changed", async () => {
    const world = await authorizedCharge();
    const stored = (await world.store.findByAuthorizationId(world.id))!;
    const fingerprint = operationFingerprint("capture", "10.00");
    const legacy = { operation: "capture" as const, sequence: "old", fingerprint, state: "sent" as const };
    await world.store.compareAndSet(stored.version, {
      ...stored,
      operationLog: { "capture:old": legacy },
      version: stored.version + 1,
    });
    // Stored moments ago: the request of the release that stored it may still be sending it.
    const soon = await world.merchant("capture", { amount: "10.00", sequence: "old" });
    expect(soon.status).toBe(503);
    expect(soon.json).toMatchObject({
      type: "urn:purchase-auth:problem:payment-confirming",
      retryable: true,
    });
    expect(world.alerts).toEqual([]);
    world.sandbox.advanceClock(MINUTE);
    const again = await world.merchant("capture", { amount: "10.00", sequence: "old" });
    expect(again.json.type).toBe("urn:purchase-auth:problem:operation-unconfirmed");
    expect(world.moves("capture")).toEqual([]);
    expect(world.alerts).toHaveLength(1);
  });

  it('a sequence sent as "5" and then as 5 is one write: resent a day later it is never sent as new', async () => {
    const world = await authorizedCharge();
    world.sandbox.injectFault({
      kind: "drop_after_commit",
      match: { method: "POST", path: "/manage/orders" },
      count: null,
    });
    expect((await world.merchant("capture", { amount: "10.00", sequence: "5" })).status).toBe(503);
    world.sandbox.clearFaults();
    expect((await world.merchant("refund", { amount: "2.00", sequence: "2" })).status).toBe(200);
    world.sandbox.advanceClock(25 * HOUR);
    const capture = await world.merchant("capture", { amount: "10.00", sequence: 5 });
    expect(capture.json.type).toBe("urn:purchase-auth:problem:operation-unconfirmed");
    const refund = await world.merchant("refund", { amount: "2.00", sequence: 2 });
    expect(refund.json).toMatchObject({ operation: { sequence: 2, outcome: "done" } });
    // Before: the number moved the counter, the write looked new, and each moved twice.
    expect(world.moves("capture")).toEqual(["10.00"]);
    expect(world.moves("refund")).toEqual(["2.00"]);
  });

  it("an unconfirmed entry still takes the late answer of a send made inside the window", () => {
    const entry = {
      operation: "capture" as const,
      sequence: "p1",
      fingerprint: "f",
      firstSentAt: "2026-11-26T00:00:00.000Z",
    };
    const charge = chargeWith({ ...entry, state: "unconfirmed" });
    const news = { kind: "operation", operation: "capture", sequence: "p1", fingerprint: "f" } as const;
    const now = new Date();
    expect(advance(charge, { ...news, state: "done" }, now)?.operationLog?.["capture:p1"]?.state).toBe(
      "done",
    );
    expect(advance(charge, { ...news, state: "sent" }, now)).toBeUndefined();
    const done = chargeWith({ ...entry, state: "done" });
    expect(advance(done, { ...news, state: "unconfirmed" }, now)).toBeUndefined();
  });
});

/** An authorized charge whose log holds `entry` (for the state machine alone). */
function chargeWith(entry: OperationRecord): ChargeRecord {
  return authorizedRecord({
    operationLog: { [`${entry.operation}:${entry.sequence}`]: entry },
    createdAt: "2026-11-26T00:00:00.000Z",
    updatedAt: "2026-11-26T00:00:00.000Z",
  });
}
