import { DEFAULT_PATHS } from "@purchase-auth/core";
import type { FaultSpec } from "@purchase-auth/sandbox";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chargeStatusOfOrder } from "../src/charges/state-machine.js";
import type { ChargeStore } from "../src/index.js";
import { operationFingerprint } from "../src/routes/merchant.js";
import {
  type Action,
  CARTS,
  type Instance,
  type Operation,
  resetTally,
  type SequenceStyle,
  type Step,
  tally,
  World,
} from "./support/convergence-world.js";
import { freshSchema, postgresStore } from "./support/database.js";
import { createShopData, useShops } from "./support/shop.js";

// Issue 12's property: whatever faults hit the service's answers, however the shop restarts and
// its webhooks arrive, every answer the shop gave was true and every charge ends where the service's
// money is. Generated scenarios of shoppers paying (manual or auto capture), merchants capturing, cancelling
// and refunding with retries, on two instances of the shop sharing one store, some at the same
// moment; faults on both kinds of write and on tokens, restarts, duplicated and reordered webhooks,
// reconcile passes and virtual time. Then the shop's records and answers are compared with the
// sandbox's.

const shops = useShops();

/** Scenarios per run of the suite; raise it (PROPERTY_RUNS=500 PROPERTY_SEED=random) to hunt. */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 30);
/** A fault on the next write of one kind (or, for the token faults, on whatever comes next). */
function faultOn(path: string): fc.Arbitrary<FaultSpec | undefined> {
  const onWrite = fc
    .tuple(
      fc.constantFrom<FaultSpec>(
        { kind: "drop_after_commit" },
        { kind: "reset_before_processing" },
        { kind: "unavailable" },
        { kind: "in_progress" },
        { kind: "gateway_error", status: 502, phase: "after_commit" },
        { kind: "gateway_error", status: 504, phase: "before_commit" },
        { kind: "garbled_success", body: "empty" },
        { kind: "garbled_success", body: "garbled" },
        { kind: "delay_after_commit", latencyMs: 30 },
        { kind: "rate_limited", retryAfterSeconds: 0 },
      ),
      fc.integer({ min: 1, max: 3 }),
    )
    .map(([fault, count]): FaultSpec => ({ ...fault, count, match: { method: "POST", path } }));
  const onToken = fc.constantFrom<FaultSpec>(
    { kind: "revoke_access_token", count: 1 },
    { kind: "token_endpoint_down", count: 2 },
  );
  return fc.option(fc.oneof({ weight: 4, arbitrary: onWrite }, { weight: 1, arbitrary: onToken }), {
    nil: undefined,
    freq: 2,
  });
}

const instance = fc.constantFrom<Instance>(0, 1);
/** Where capture, cancel and refund go (a fault's path matches by prefix). */
const ORDER_WRITES = DEFAULT_PATHS.order.slice(0, DEFAULT_PATHS.order.indexOf("{"));

const payArbitrary: fc.Arbitrary<Action> = fc.record({
  kind: fc.constant("pay" as const),
  instance,
  cart: fc.nat(CARTS - 1),
  twice: fc.boolean(),
  fault: faultOn("/purchase/authorizations"),
});

const pressArbitrary: fc.Arbitrary<Action> = fc.record({
  kind: fc.constant("press" as const),
  instance,
  cart: fc.nat(CARTS - 1),
  operation: fc.constantFrom<Operation>("capture", "capture", "capture_rest", "cancel", "refund", "refund"),
  sequence: fc.constantFrom<SequenceStyle>("id", "counted", "none"),
  fault: faultOn(ORDER_WRITES),
  tries: fc.constantFrom(1, 3),
  comesBack: fc.boolean(),
});

const actionArbitrary = fc.oneof(payArbitrary, pressArbitrary);

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: payArbitrary },
  { weight: 5, arbitrary: pressArbitrary },
  {
    weight: 2,
    arbitrary: fc.tuple(actionArbitrary, actionArbitrary).map((actions): Step => ({ kind: "race", actions })),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("restart" as const), instance }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reconcile" as const), instance }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("webhooks" as const),
      duplicate: fc.boolean(),
      outOfOrder: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("advance" as const),
      // Minutes, or a day: past the service's memory of every key sent so far.
      minutes: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 90 }) }, fc.constant(25 * 60)),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("again" as const),
      instance,
      press: fc.nat(20),
      fault: faultOn(ORDER_WRITES),
    }),
  },
);

interface SandboxOrder {
  orderId: string;
  authorizationId: string;
  status: Parameters<typeof chargeStatusOfOrder>[0];
  capturedAmount: string;
  operations: Array<{ type: string; amount: string }>;
}

function seedOptions(): { seed?: number; path?: string } {
  const seed = process.env.PROPERTY_SEED ?? "20261126";
  if (seed === "random") return {};
  const path = process.env.PROPERTY_PATH;
  return path === undefined ? { seed: Number(seed) } : { seed: Number(seed), path };
}

const UNCONFIRMED = "urn:purchase-auth:problem:operation-unconfirmed";
/** The answers that say the service refused this press's key. */
const REFUSALS = ["order-state", "operation-refused"].map((type) => `urn:purchase-auth:problem:${type}`);

/** Compares the shop's records and answers with the sandbox's; returns what does not hold. */
async function discrepancies(world: World): Promise<string[]> {
  const { sandbox, merchant } = world.data;
  const found: string[] = [];
  const authorizations = sandbox.authorizations({ merchantId: merchant.merchantId });
  const orders = sandbox.orders({ merchantId: merchant.merchantId }) as unknown as SandboxOrder[];
  const orderByAuthorization = new Map(orders.map((order) => [order.authorizationId, order]));
  // A shopper told "nothing happened" was not charged under that attempt's key afterwards.
  for (const authorization of authorizations) {
    if (authorization.status === "Succeeded" && world.notSentKeys.has(authorization.idempotencyKey ?? ""))
      found.push(`${authorization.reference}: charged under a key the shopper was told did nothing`);
  }

  for (const [cart, cartId] of world.carts.entries()) {
    const reference = world.data.referenceOf(cartId);
    const succeeded = authorizations.filter((a) => a.reference === reference && a.status === "Succeeded");
    const stored = await world.stores[0].findByReference(reference);
    if (stored?.status === "needs_review" && !world.alerted.has(reference))
      found.push(`${reference}: under review without an alert`);
    if (succeeded.length > 1)
      found.push(`${reference}: ${succeeded.length} authorizations succeeded (double charge)`);
    const truth = succeeded[0];
    if (truth !== undefined) {
      tally.authorized++;
      if (stored === undefined) found.push(`${reference}: authorized at the service, unknown to the shop`);
      else if (stored.status === "needs_review") {
        // Allowed only as an honest "we cannot know": never with a wrong authorization id.
        if (stored.authorizationId !== undefined && stored.authorizationId !== truth.authorizationId)
          found.push(`${reference}: under review with another authorization id`);
      } else {
        const order = orderByAuthorization.get(truth.authorizationId);
        const expected = order === undefined ? "authorized" : chargeStatusOfOrder(order.status);
        if (stored.authorizationId !== truth.authorizationId)
          found.push(
            `${reference}: shop has authorization ${stored.authorizationId}, service ${truth.authorizationId}`,
          );
        if (stored.status !== expected)
          found.push(`${reference}: shop says ${stored.status}, service order says ${expected}`);
      }
    } else if (stored !== undefined && !["failed", "needs_review"].includes(stored.status)) {
      found.push(`${reference}: shop says ${stored.status}, the service has no succeeded authorization`);
    }
    // An answer that said the money was reserved or moved named the service's one authorization.
    for (const answer of world.paidAnswers.filter((answer) => answer.cart === cart)) {
      if (
        answer.status === "failed" &&
        answer.authorizationId !== undefined &&
        answer.authorizationId === truth?.authorizationId
      )
        found.push(`${reference}: a shopper was told failed about the service's succeeded authorization`);
      if (["pending", "failed", "needs_review"].includes(answer.status)) continue;
      if (answer.authorizationId === undefined || answer.authorizationId !== truth?.authorizationId)
        found.push(
          `${reference}: a shopper was shown ${answer.status} with authorization ${answer.authorizationId}, not the service's`,
        );
    }

    // Every write whose answer was lost was settled, by a re-press or by the reconciler; a write whose
    // outcome stayed unknown past the window was handed to a person.
    for (const [id, entry] of Object.entries(stored?.operationLog ?? {})) {
      if (entry.state === "sent") found.push(`${reference}: ${id} left sent`);
      const alerted = world.alerts.some(
        (alert) =>
          alert.reference === reference && alert.message.includes(`of ${entry.operation} ${entry.sequence} `),
      );
      if (entry.state === "unconfirmed" && !alerted)
        found.push(`${reference}: ${id} unconfirmed without an alert`);
    }

    const order = truth === undefined ? undefined : orderByAuthorization.get(truth.authorizationId);
    // A capture of the rest or a cancel logged refused (not applied) whose effect the order shows
    // anyway must have been done by another write of the same operation: else the log and the
    // order disagree for ever (one send of it was still on its way when it was decided).
    const log = Object.values(stored?.operationLog ?? {});
    for (const entry of log) {
      if (entry.state !== "refused" || entry.amount !== undefined || order === undefined) continue;
      if (entry.fingerprint !== operationFingerprint(entry.operation, undefined)) continue;
      const shows = entry.operation === "cancel" ? ["Cancelled"] : ["Activated", "PartReturned", "Returned"];
      const doneByAnother = log.some(
        (other) =>
          other !== entry &&
          other.operation === entry.operation &&
          other.fingerprint === entry.fingerprint &&
          other.state === "done",
      );
      const autoCaptured = entry.operation === "capture" && world.captureMode === "Auto";
      if (shows.includes(order.status) && !doneByAnother && !autoCaptured)
        found.push(
          `${reference}: ${entry.operation} ${entry.sequence} logged not applied, but the order is ${order.status}`,
        );
    }
    for (const press of world.presses.filter((press) => press.cart === cart && press.amount !== undefined)) {
      const type = press.operation === "refund" ? "refund" : "capture";
      const what = `${type} ${press.amount} (sequence ${press.sequence})`;
      const moved = (order?.operations ?? []).filter(
        (op) => op.type === type && op.amount === press.amount,
      ).length;
      if (moved > 1) found.push(`${reference}: ${what} moved ${moved} times`);
      for (const answer of press.answers) {
        if (answer.status === 200 && moved !== 1)
          found.push(`${reference}: ${what} answered 200, moved ${moved} times`);
        // A refusal of this press's key: had any send of it moved money, the key would say so.
        if (REFUSALS.includes(answer.type ?? "") && moved !== 0)
          found.push(`${reference}: ${what} answered ${answer.type}, moved ${moved} times`);
      }
      // Never answered done or unknown, and never possibly sent without an answer: nothing moved.
      const mayHaveMoved =
        press.uncertain || press.answers.some((a) => a.status === 200 || a.type === UNCONFIRMED);
      if (!mayHaveMoved && moved !== 0) found.push(`${reference}: ${what} moved without being sent`);
      // The entry of this press (a counted sequence two pages showed at once is one press's).
      const logged = stored?.operationLog?.[`${type}:${press.sequence}`];
      const entry = logged?.fingerprint === operationFingerprint(type, press.amount) ? logged : undefined;
      if (entry?.state === "refused" && moved > 0) found.push(`${reference}: ${what} logged refused, moved`);
      if (entry?.state === "done" && moved === 0)
        found.push(`${reference}: ${what} logged done, moved nothing`);
    }
    for (const press of world.presses.filter((press) => press.cart === cart && press.amount === undefined)) {
      if (!press.answers.some((answer) => answer.status === 200)) continue;
      const done =
        press.operation === "cancel"
          ? ["Cancelled", "Expired", "Activated", "PartReturned", "Returned"]
          : ["Activated", "PartReturned", "Returned"];
      if (order === undefined || !done.includes(order.status))
        found.push(
          `${reference}: ${press.operation} answered 200 but the service's order is ${order?.status}`,
        );
    }
  }
  return found;
}

/**
 * Runs the property over `runs` generated scenarios, each on a new merchant and on the stores
 * `storesFor` gives (one per instance; a fresh database per scenario), then prints what they did.
 */
async function checkConvergence(
  label: string,
  runs: number,
  storesFor: () => Promise<{ stores?: [ChargeStore, ChargeStore]; drop(): Promise<void> }>,
): Promise<void> {
  resetTally();
  const scenarios = fc.record({
    captureMode: fc.constantFrom<"Auto" | "Manual">("Manual", "Manual", "Auto"),
    steps: fc.array(stepArbitrary, { minLength: 4, maxLength: 18 }),
  });
  await fc.assert(
    fc.asyncProperty(scenarios, async ({ captureMode, steps }) => {
      const { stores, drop } = await storesFor();
      const world = new World(createShopData(shops.sandbox()), captureMode, stores);
      await world.start();
      try {
        tally.scenarios++;
        tally.steps += steps.length;
        for (const step of steps) await world.run(step);
        await world.settle();
        expect([...(await discrepancies(world)), ...world.unsettledResends]).toEqual([]);
      } finally {
        shops.sandbox().clearFaults();
        await world.close();
        await drop();
      }
    }),
    {
      numRuns: runs,
      endOnFailure: true,
      // A fixed seed by default: the suite checks the same scenarios on every run, so a failure in
      // CI replays. PROPERTY_SEED=random hunts new ones (the seed is printed with any failure).
      ...seedOptions(),
    },
  );
  console.log(`express convergence property (${label}): ${JSON.stringify(tally)}`);
  expect(tally.scenarios).toBeGreaterThanOrEqual(runs);
  expect(tally.authorized).toBeGreaterThan(0);
}

describe("every answer true and every charge at the service's truth, over generated fault sequences", () => {
  it(
    "shoppers, merchants, faults, restarts, races, webhooks and time (memory store)",
    async () => {
      await checkConvergence("memory", RUNS, async () => ({ drop: async () => undefined }));
      // Not vacuous: money was moved and refused, under faults, across restarts and races. (Checked
      // here, where the scenarios are many; the PostgreSQL run is too short to be sure of each.)
      expect(tally.pressesDone).toBeGreaterThan(0);
      expect(tally.pressesRefused).toBeGreaterThan(0);
      expect(tally.faultsFired).toBeGreaterThan(0);
      expect(tally.orderWriteFaultsFired).toBeGreaterThan(0);
      expect(tally.restarts).toBeGreaterThan(0);
      expect(tally.races).toBeGreaterThan(0);
      expect(tally.leftToReconciler).toBeGreaterThan(0);
      // Shoppers were told "nothing happened" for create calls that reached nothing, and those
      // attempts were recorded failed (then checked never charged).
      expect(tally.notSentFailed).toBeGreaterThan(0);
      // The reconciler's own duty was exercised: it sent writes again (inside their window), and
      // the ones it sent once faults were cleared were answered by the service; it also settled
      // writes from the log or the order without sending them.
      expect(tally.reconcilerResent).toBeGreaterThan(0);
      expect(tally.resendsSettled).toBeGreaterThan(0);
      expect(tally.reconcilerAnsweredFromLog).toBeGreaterThan(0);
    },
    120_000 + RUNS * 500,
  );

  it(
    "the same on PostgreSQL: each instance its own pool and store, one database",
    async () => {
      await checkConvergence("postgres", Math.max(15, Math.round(RUNS / 2)), async () => {
        const database = await freshSchema();
        const stores: [ChargeStore, ChargeStore] = [
          await postgresStore(database.newPool()),
          await postgresStore(database.newPool()),
        ];
        return { stores, drop: () => database.drop() };
      });
    },
    120_000 + RUNS * 2_000,
  );
});
