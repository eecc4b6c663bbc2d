import { describe, expect, it } from "vitest";
import { lastSendOf, mayHaveReached } from "../src/charges/operation-log.js";
import { advance } from "../src/charges/state-machine.js";
import type { ChargeRecord } from "../src/index.js";
import { authorizedCharge } from "./support/charges-kit.js";

// A merchant write's log entry counts its sends (each before it goes out) and the ones core said
// never reached the service; only forward: a settled entry takes no more counts, and counts only grow.

const AT = "2026-11-26T10:00:00.000Z";
const LATER = "2026-11-26T10:30:00.000Z";
const news = { kind: "operation", operation: "refund", sequence: "r1", fingerprint: "f" } as const;

function authorized(): ChargeRecord {
  return authorizedCharge({
    status: "captured",
    operations: { capture: 1, cancel: 0, refund: 0 },
    createdAt: AT,
    updatedAt: AT,
  });
}

describe("the operation log counts a write's sends", () => {
  it("records the first send with the entry, each later one before it goes out, and the undelivered ones", () => {
    const now = new Date(LATER);
    const created = advance(authorized(), { ...news, state: "sent", at: AT, amount: "5.00" }, now)!;
    const first = created.operationLog!["refund:r1"]!;
    expect(first).toMatchObject({ state: "sent", sends: 1, firstSentAt: AT, lastSentAt: AT });
    expect(mayHaveReached(first)).toBe(true);
    const notSent = advance(created, { ...news, state: "sent", notDelivered: true }, now)!;
    expect(notSent.operationLog!["refund:r1"]).toMatchObject({ sends: 1, undelivered: 1 });
    expect(mayHaveReached(notSent.operationLog!["refund:r1"]!)).toBe(false);
    // A re-press sends it again: counted (with its time) before it goes out, its first time kept.
    const again = advance(notSent, { ...news, state: "sent", at: LATER, sending: true }, now)!;
    const second = again.operationLog!["refund:r1"]!;
    expect(second).toMatchObject({
      sends: 2,
      undelivered: 1,
      firstSentAt: AT,
      lastSentAt: LATER,
      amount: "5.00",
    });
    expect(mayHaveReached(second)).toBe(true);
    expect(lastSendOf(second, again)).toBe(Date.parse(LATER));
    // Recording the entry again (a re-press's write-ahead) is no send, and changes nothing.
    expect(advance(again, { ...news, state: "sent", at: LATER, amount: "5.00" }, now)).toBeUndefined();
  });

  it("a settled entry takes no more counts", () => {
    const now = new Date(LATER);
    const created = advance(authorized(), { ...news, state: "sent", at: AT }, now)!;
    const done = advance(created, { ...news, state: "done" }, now)!;
    expect(advance(done, { ...news, state: "sent", at: LATER, sending: true }, now)).toBeUndefined();
    expect(advance(done, { ...news, state: "sent", notDelivered: true }, now)).toBeUndefined();
  });

  it("an entry stored before sends were counted may have reached the service, and its last send is the charge's last change", () => {
    const legacy = { operation: "refund" as const, sequence: "r1", fingerprint: "f", state: "sent" as const };
    const charge = { ...authorized(), updatedAt: LATER, operationLog: { "refund:r1": legacy } };
    expect(mayHaveReached(legacy)).toBe(true);
    expect(lastSendOf(legacy, charge)).toBe(Date.parse(LATER));
    expect(lastSendOf({ ...legacy, firstSentAt: AT }, charge)).toBe(Date.parse(AT));
  });
});
