import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Answer,
  clearFaultsAndSettle,
  injectOrderWriteFaults,
  killEveryPresses,
  movesOf,
  ordersByAuthorization,
  type Paid,
  type PaidCharges,
  PRESSES,
  postMerchantWrite,
  startPaidCharges,
} from "./crash/merchant-crash.js";

// The merchant side of the crash proof: manual-capture charges, then a back office capturing part,
// capturing the rest and refunding twice, each press with an id of its own and sent again after a
// 5xx or a network error as the README says, while ~40 % of the order writes lose or garble their
// answer and the shop is SIGKILLed again and again. Then every order at the service must show each
// press exactly once, and every charge the order's status.

const CHARGES = 30;
/** The shop is killed once every this many presses answered (at a random moment after). */
const KILL_EVERY_PRESSES = 12;
const MAX_KILLS = 10;

let charges: PaidCharges;

beforeAll(async () => {
  charges = await startPaidCharges(CHARGES);
}, 60_000);

afterAll(async () => {
  await charges?.close();
});

/** A back-office press as the README has it: its own id, sent again after a 5xx or no answer. */
async function press(charge: Paid, path: string, body: object, signal: AbortSignal): Promise<Answer> {
  const sequence = `press-${randomUUID()}`;
  for (;;) {
    if (signal.aborted) throw new Error(`${path} of ${charge.reference} never got an answer`);
    const answer = await postMerchantWrite(charges.crashShop.shop, charge, path, body, sequence);
    if (answer !== undefined && answer.status < 500) return answer;
    await sleep(50 + Math.random() * 100);
  }
}

describe("merchant writes converge to the service's truth across SIGKILLs", () => {
  it("each press moves its money exactly once, and every charge shows its order's status", async () => {
    const { sandbox, crashShop, paid } = charges;
    const { shop, admin, schema } = crashShop;
    await injectOrderWriteFaults(sandbox);

    const stop = AbortSignal.timeout(120_000);
    let answered = 0;
    const killing = killEveryPresses(shop, KILL_EVERY_PRESSES, MAX_KILLS, () => answered);
    const answers: Answer[][] = [];
    try {
      // Five back-office clerks, each taking the next charge through its four presses.
      const queue = [...paid.entries()];
      await Promise.all(
        Array.from({ length: 5 }, async () => {
          for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
            const [index, charge] = next;
            answers[index] = [];
            for (const { path, body } of PRESSES) {
              answers[index].push(await press(charge, path, body, stop));
              answered++;
            }
          }
        }),
      );
    } finally {
      await killing.stop();
    }
    await clearFaultsAndSettle(sandbox);

    const byAuthorization = await ordersByAuthorization(sandbox);
    const wrong: unknown[] = [];
    for (const [index, charge] of paid.entries()) {
      const moves = movesOf(byAuthorization.get(charge.authorizationId));
      if (
        JSON.stringify(moves) !==
        JSON.stringify(["capture 10.00", "capture 39.80", "refund 5.00", "refund 3.00"])
      )
        wrong.push({ reference: charge.reference, moves });
      const statuses = answers[index]?.map((answer) => answer.status);
      if (JSON.stringify(statuses) !== "[200,200,200,200]")
        wrong.push({ reference: charge.reference, statuses });
    }
    // The shop's records, once its webhooks and reads have settled: the order's status.
    let rows: Array<{ reference: string; status: string }> = [];
    for (let wait = 0; wait < 40; wait++) {
      rows = (await admin.query(`SELECT reference, status FROM ${schema}.purchase_auth_charges`)).rows;
      if (rows.every((row) => row.status === "partially_refunded")) break;
      await sleep(250);
    }
    const drifted = rows.filter((row) => row.status !== "partially_refunded");
    console.log(
      `express merchant crash: charges=${CHARGES}, presses=${answered}, shop killed ${shop.kills} times, ` +
        `wrong moves or answers=${wrong.length}, records drifted from the order=${drifted.length}`,
    );
    expect(shop.kills).toBeGreaterThanOrEqual(5);
    expect(rows).toHaveLength(CHARGES); // no drift check passes on a store that lost its records
    expect(wrong).toEqual([]);
    expect(drifted).toEqual([]);
  }, 150_000);
});
