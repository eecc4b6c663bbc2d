import { toCents } from "@purchase-auth/core";
import type { FaultSpec } from "@purchase-auth/sandbox";
import fc from "fast-check";
import { expect, it } from "vitest";
import { type Delivery, resetTally, type Step, tally, World } from "./support/convergence-world";
import { orderLinkTable } from "./support/reconcile-job";
import { syncProviderTests } from "./support/sync-provider-tests";

// Whatever faults hit the service's answers, however the webhooks arrive and whenever the reconcile
// job runs, Medusa's records end where the service's money is. Generated scenarios of 2-3 payment
// sessions (synchronous providers, manual capture or, for about a third, Auto): checkouts (some
// racing another or the job) with faults on the authorization, webhooks delivered in order, twice,
// backwards or not at all, job runs with faults on the releases, captures (some retried once after
// failing, same amount) and refunds (some faulted), deleted sessions, Medusa canceling a payment,
// canceling an order (cancelOrderWorkflow's refunds and payment cancels, then the order-canceled
// subscriber), deleting a customer (the customer-deleted subscriber, tokens cancelled at the service
// or not), virtual time. Then a settle (faults off, every event never delivered delivered, the job
// run with time moving past its thresholds) and a comparison of Medusa's records with the sandbox's,
// session by session: the service's authorization carries the session id as its actionReference
// (authorization.ts).
//
// The steps are what Medusa 2.21 does, no more: a session is authorized only under its cart's lock
// (cart completion and the webhook's payment workflow both take it), only a session whose cart
// did not complete (no payment) is deleted, and a canceled order's payment is not captured. No case
// of the README's "Known limitations" is excluded from the checks: none of them arises from these
// steps (undelivered webhooks are delivered in the settle, captures and refunds are never retried
// with another amount, authorized sessions are not deleted).

/** Scenarios per run of the suite; raise it (PROPERTY_RUNS=200) to hunt longer. */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 30);
/**
 * The fixed seed: its scenarios take every kind of step (payment and order cancels, a canceled
 * order's collection rewritten, capture retries, customer deletions), asserted at the end.
 */
const DEFAULT_SEED = "3";
const SEED = process.env.PROPERTY_SEED ?? DEFAULT_SEED;
/** The seed used: PROPERTY_SEED=random draws one, printed so a failure (or a pass) can be replayed. */
const SEED_USED = SEED === "random" ? Math.floor(Math.random() * 2 ** 31) : Number(SEED);

const SESSION = fc.nat(2);

/** A fault on the next one or two requests of `method path`, or none (half of the time). */
function faultOn(path: string, kinds: FaultSpec[], method = "POST"): fc.Arbitrary<FaultSpec | undefined> {
  const fault = fc
    .tuple(fc.constantFrom(...kinds), fc.integer({ min: 1, max: 2 }))
    .map(([kind, count]): FaultSpec => ({ ...kind, count, match: { method, path } }));
  return fc.option(fault, { nil: undefined, freq: 2 });
}

const authorizationFault = faultOn("/purchase/authorizations", [
  { kind: "drop_after_commit" },
  { kind: "gateway_error", status: 502, phase: "after_commit" },
  { kind: "gateway_error", status: 504, phase: "before_commit" },
  { kind: "unavailable" },
  { kind: "garbled_success", body: "garbled" },
  { kind: "delay_after_commit", latencyMs: 30 },
  { kind: "reset_before_processing" },
]);

/** The order writes: capture, refund, and the releases (cancel, refund) of the job and of deletes. */
const orderWriteFault = faultOn("/manage/orders", [
  { kind: "drop_after_commit" },
  { kind: "gateway_error", status: 502, phase: "after_commit" },
  { kind: "unavailable" },
]);

const part = fc.constantFrom<"rest" | "half">("rest", "half");

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("checkout" as const),
      session: SESSION,
      with: fc.constantFrom<"alone" | "again" | "job">("alone", "alone", "again", "job"),
      fault: authorizationFault,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("webhooks" as const),
      session: SESSION,
      delivery: fc.constantFrom<Delivery>("all", "duplicated", "reversed", "none"),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("job" as const), fault: orderWriteFault }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("capture" as const),
      session: SESSION,
      part,
      fault: orderWriteFault,
      retry: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("refund" as const),
      session: SESSION,
      part,
      fault: orderWriteFault,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("delete" as const), session: SESSION, fault: orderWriteFault }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("advance" as const), minutes: fc.integer({ min: 1, max: 90 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("cancel-payment" as const),
      session: SESSION,
      fault: orderWriteFault,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("cancel-order" as const),
      session: SESSION,
      fault: orderWriteFault,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("delete-customer" as const),
      session: SESSION,
      cancelAtService: fc.boolean(),
      fault: faultOn(
        "/purchase/customer-tokens",
        [{ kind: "unavailable" }, { kind: "drop_after_commit" }],
        "DELETE",
      ),
    }),
  },
);

/** Faults off, every undelivered event delivered, and the job run as time passes its thresholds. */
async function settle(world: World): Promise<void> {
  const sandbox = world.ctx.sandbox();
  sandbox.clearFaults();
  await sandbox.settle();
  // The service redelivers what Medusa never acknowledged: the events never delivered. (Medusa's
  // webhook route acknowledges before its handler runs, so a handler that failed is not redelivered:
  // what it left undone is the reconcile job's to repair.)
  await world.deliver(world.events().filter((event) => !world.delivered.has(event.id)));
  // Within the service's idempotency hour, past the 4-hour release review, past a day's grace.
  for (const minutes of [0, 5, 120, 300, 1500]) {
    if (minutes > 0) sandbox.advanceClock(minutes * 60_000);
    await sandbox.settle();
    await world.runJob();
    await sandbox.settle();
    await world.deliver(world.events().filter((event) => !world.delivered.has(event.id)));
  }
}

/** Compares Medusa's records of each session with the service's money; returns what does not hold. */
async function discrepancies(world: World): Promise<string[]> {
  const { payment } = world;
  const sandbox = world.ctx.sandbox();
  const found: string[] = [];
  for (const session of world.sessions) {
    const id = session.id;
    const succeeded = sandbox
      .authorizations()
      .filter((a) => a.actionReference === id && a.status === "Succeeded");
    const [stored] = await payment.listPaymentSessions({ id });
    const data = (stored?.data ?? {}) as {
      state?: string;
      review_reason?: string | null;
      order_id?: string | null;
    };
    const flagged = typeof data.review_reason === "string" && data.review_reason !== "";
    const live = await world.livePayment(id);

    // (1) No double charge.
    if (succeeded.length > 1)
      found.push(`${id}: ${succeeded.length} authorizations succeeded (double charge)`);
    const truth = succeeded[0];
    const order = truth?.orderId === undefined ? undefined : world.ctx.serviceOrder(truth.orderId);
    if (truth !== undefined) tally.authorizedAtService++;
    if (flagged) tally.flaggedForReview++;

    // (2) What Medusa records as authorized or captured is held at the service, with its figures.
    // A session's status stays authorized when Medusa cancels its payment (the order was canceled):
    // the payment, when there is one, says whether Medusa counts it paid.
    const anyPayment = (await payment.listPayments({ payment_session_id: id })).length > 0;
    const medusaSaysPaid =
      live !== undefined ||
      (!anyPayment && (stored?.status === "authorized" || stored?.status === "captured"));
    if (medusaSaysPaid) {
      tally.paidInMedusa++;
      if (order === undefined)
        found.push(`${id}: Medusa records it ${stored?.status}, no succeeded authorization`);
      else if (order.status === "Cancelled" || order.status === "Expired")
        found.push(`${id}: Medusa records it paid, the service's order ${order.orderId} is ${order.status}`);
      if (order !== undefined && live !== undefined) {
        if (toCents(order.capturedAmount) !== live.captured)
          found.push(`${id}: Medusa captured ${live.captured} cents, the service ${order.capturedAmount}`);
        if (toCents(order.refundedAmount) !== live.refunded)
          found.push(`${id}: Medusa refunded ${live.refunded} cents, the service ${order.refundedAmount}`);
        if ((live.payment.data as { order_id?: string } | null)?.order_id !== order.orderId)
          found.push(`${id}: Medusa's payment names another order than the service's ${order.orderId}`);
      }
    }

    // (3) Money the service holds or took for the session is Medusa's payment, or flagged for review.
    const holds = order !== undefined && !["Cancelled", "Expired", "Returned"].includes(order.status);
    if (order !== undefined && !holds) tally.releasedAtService++;
    if (holds && live === undefined && !flagged)
      found.push(
        `${id}: the service's order ${order.orderId} is ${order.status} (captured ${order.capturedAmount}), Medusa ${
          stored === undefined ? "deleted the session" : `has session ${stored.status}/${data.state}`
        } without a payment or a review flag`,
      );

    // (4) Nothing left unknown without a person asked to look.
    if (stored !== undefined && data.state === "unknown" && !flagged)
      found.push(`${id}: left unknown without a review flag`);

    // (5) A canceled Medusa order leaves nothing with the service: nothing held, what was taken given back.
    if (world.canceledOrders.has(id) && holds && !flagged)
      found.push(
        `${id}: Medusa canceled its order, the service's order ${order.orderId} is ${order.status} (captured ${order.capturedAmount}, refunded ${order.refundedAmount})`,
      );
  }
  return found;
}

syncProviderTests(
  "convergence-property",
  (ctx) => {
    it("Medusa's records converge to the service's money over generated fault sequences", async () => {
      await orderLinkTable(ctx.medusaApp);
      resetTally();
      let nextAmount = 0;
      const scenarios = fc.record({
        sessions: fc.integer({ min: 2, max: 3 }),
        // Which sessions are of the Auto capture provider (the service captures when it authorizes).
        auto: fc.array(fc.constantFrom(false, false, true), { minLength: 3, maxLength: 3 }),
        steps: fc.array(stepArbitrary, { minLength: 4, maxLength: 14 }),
      });
      await fc.assert(
        fc.asyncProperty(scenarios, async ({ sessions, auto, steps }) => {
          const world = new World(ctx);
          // Amounts distinct across the run (so no two sessions' money can be mistaken for each other).
          await world.open(
            Array.from({ length: sessions }, () => {
              nextAmount++;
              return `${20 + nextAmount}.${String(nextAmount % 100).padStart(2, "0")}`;
            }),
            auto,
          );
          try {
            tally.scenarios++;
            tally.steps += steps.length;
            for (const step of steps) await world.run(step);
            await settle(world);
            const found = await discrepancies(world);
            // PROPERTY_DEBUG=1: the plugin's log lines so far, when a scenario fails.
            if (found.length > 0 && process.env.PROPERTY_DEBUG)
              console.log(ctx.logLines.map((l) => `${l.level} ${l.message}`).join("\n"));
            expect(found).toEqual([]);
          } finally {
            ctx.sandbox().clearFaults();
          }
        }),
        {
          numRuns: RUNS,
          endOnFailure: true,
          // A fixed seed unless told otherwise: CI checks the same scenarios every run, and a failure
          // there replays. PROPERTY_SEED=random (with PROPERTY_RUNS) hunts new ones.
          seed: SEED_USED,
          ...(process.env.PROPERTY_PATH ? { path: process.env.PROPERTY_PATH } : {}),
        },
      );
      console.log(`medusa convergence property (seed ${SEED_USED}): ${JSON.stringify(tally)}`);
      expect(tally.scenarios).toBeGreaterThanOrEqual(RUNS);
      expect(tally.authorizedAtService).toBeGreaterThan(0);
      // The fixed seed's scenarios take every kind of step (another seed may draw fewer).
      if (process.env.PROPERTY_SEED === undefined) {
        expect(tally.paymentCancels).toBeGreaterThan(0);
        expect(tally.orderCancels).toBeGreaterThan(0);
        expect(tally.canceledCollectionsRewritten).toBeGreaterThan(0);
        expect(tally.captureRetries).toBeGreaterThan(0);
        expect(tally.customersDeleted).toBeGreaterThan(0);
      }
    }, 600_000);
  },
  { withAuto: true },
);
