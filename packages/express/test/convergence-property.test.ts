import type { FaultSpec } from "@purchase-auth/sandbox";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { chargeStatusOfOrder } from "../src/charges/state-machine.js";
import type { ChargeStore } from "../src/index.js";
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

/** Scenarios per run of the suite; raise it (PROPERTY_RUNS=500) to hunt longer. */
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
  fault: faultOn("/purchase/orders"),
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
    arbitrary: fc.record({ kind: fc.constant("advance" as const), minutes: fc.integer({ min: 1, max: 90 }) }),
  },
);

interface SandboxOrder {
  orderId: string;
  authorizationId: string;
  status: Parameters<typeof chargeStatusOfOrder>[0];
  capturedAmount: string;
  operations: Array<{ type: string; amount: string }>;
}

/** Compares the shop's records and answers with the sandbox's; returns what does not hold. */
async function discrepancies(world: World): Promise<string[]> {
  const { sandbox, merchant } = world.data;
  const found: string[] = [];
  const authorizations = sandbox.authorizations({ merchantId: merchant.merchantId });
  const orders = sandbox.orders({ merchantId: merchant.merchantId }) as unknown as SandboxOrder[];
  const orderByAuthorization = new Map(orders.map((order) => [order.authorizationId, order]));

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
      if (["pending", "failed", "needs_review"].includes(answer.status)) continue;
      if (answer.authorizationId === undefined || answer.authorizationId !== truth?.authorizationId)
        found.push(
          `${reference}: a shopper was shown ${answer.status} with authorization ${answer.authorizationId}, not the service's`,
        );
    }

    const order = truth === undefined ? undefined : orderByAuthorization.get(truth.authorizationId);
    for (const press of world.presses.filter((press) => press.cart === cart && press.amount !== undefined)) {
      const type = press.operation === "refund" ? "refund" : "capture";
      const moved = (order?.operations ?? []).filter(
        (op) => op.type === type && op.amount === press.amount,
      ).length;
      if (moved > 1) found.push(`${reference}: ${type} ${press.amount} moved ${moved} times`);
      const claimedDone = press.answer?.status === 200;
      if (claimedDone && moved !== 1)
        found.push(`${reference}: ${type} ${press.amount} answered 200, moved ${moved} times`);
    }
    for (const press of world.presses.filter((press) => press.cart === cart && press.amount === undefined)) {
      if (press.answer?.status !== 200) continue;
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
        expect(await discrepancies(world)).toEqual([]);
      } finally {
        shops.sandbox().clearFaults();
        await world.close();
        await drop();
      }
    }),
    {
      numRuns: runs,
      endOnFailure: true,
      ...(process.env.PROPERTY_SEED
        ? { seed: Number(process.env.PROPERTY_SEED), path: process.env.PROPERTY_PATH }
        : {}),
    },
  );
  console.log(`express convergence property (${label}): ${JSON.stringify(tally)}`);
  expect(tally.scenarios).toBeGreaterThanOrEqual(runs);
  expect(tally.authorized).toBeGreaterThan(0);
}

describe("every answer true and every charge at the service's truth, over generated fault sequences", () => {
  it("shoppers, merchants, faults, restarts, races, webhooks and time (memory store)", async () => {
    await checkConvergence("memory", RUNS, async () => ({ drop: async () => undefined }));
    // Not vacuous: money was moved and refused, under faults, across restarts and races. (Checked
    // here, where the scenarios are many; the PostgreSQL run is too short to be sure of each.)
    expect(tally.pressesDone).toBeGreaterThan(0);
    expect(tally.pressesRefused).toBeGreaterThan(0);
    expect(tally.faultsFired).toBeGreaterThan(0);
    expect(tally.restarts).toBeGreaterThan(0);
    expect(tally.races).toBeGreaterThan(0);
  }, 240_000);

  it("the same on PostgreSQL: each instance its own pool and store, one database", async () => {
    await checkConvergence("postgres", Math.max(15, Math.round(RUNS / 2)), async () => {
      const database = await freshSchema();
      const stores: [ChargeStore, ChargeStore] = [
        await postgresStore(database.newPool()),
        await postgresStore(database.newPool()),
      ];
      return { stores, drop: () => database.drop() };
    });
  }, 240_000);
});
