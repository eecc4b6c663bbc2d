import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { MerchantCredentials, SandboxOutcome, SandboxRequest } from "../src/index.js";
import { Simulator } from "../src/index.js";
import { accessTokenIn, authorizationBody } from "./helpers.js";

// The idempotency store keeps an outcome in a compact form and puts the response together again on a
// replay: the replay must be the very answer first given, status, headers and body, with no key
// added or lost, for every kind of stored outcome.

let simulator: Simulator;
afterEach(() => {
  simulator.dispose();
  vi.useRealTimers();
});

const KEY_HEADER = "service-idempotency-key";

async function shop() {
  simulator = new Simulator();
  const merchant = simulator.createMerchant();
  const { customerToken } = simulator.createCustomerToken({ merchantId: merchant.merchantId });
  return { accessToken: await accessTokenOf(merchant), customerToken, merchant };
}

function accessTokenOf(merchant: MerchantCredentials): Promise<string> {
  return accessTokenIn(simulator, merchant);
}

function post(accessToken: string, url: string, key: string, body?: unknown): SandboxRequest {
  return {
    method: "POST",
    url,
    headers: {
      authorization: `Bearer ${accessToken}`,
      "content-type": "application/json",
      [KEY_HEADER]: key,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

/** Sends `request` twice under one key; the second answer is the stored one. */
async function twice(request: SandboxRequest): Promise<[SandboxOutcome, SandboxOutcome]> {
  const first = await simulator.handle(request);
  const replay = await simulator.handle(request);
  return [first, replay];
}

describe("a replayed outcome", () => {
  it("is the first answer exactly: 200 of a synchronous create, 202 of a scheduled one", async () => {
    const { accessToken, customerToken } = await shop();
    const synchronous = authorizationBody(customerToken, { attemptSchedule: { preferSynchronous: true } });
    const [created, replayed] = await twice(
      post(accessToken, "/purchase/authorizations", randomUUID(), synchronous),
    );
    expect(created).toMatchObject({ kind: "respond", status: 200 });
    expect(replayed).toStrictEqual(created);

    const scheduled = authorizationBody(customerToken);
    const [accepted, acceptedAgain] = await twice(
      post(accessToken, "/purchase/authorizations", randomUUID(), scheduled),
    );
    expect(accepted).toMatchObject({ kind: "respond", status: 202 });
    expect(acceptedAgain).toStrictEqual(accepted);
    expect(simulator.authorizations()).toHaveLength(2);
  });

  it("is the first answer exactly: 202 without a body (a capture), 400, 404 and 422", async () => {
    const { accessToken, customerToken } = await shop();
    const manual = authorizationBody(customerToken, {
      order: { captureMode: "Manual" },
      attemptSchedule: { preferSynchronous: true },
    });
    const created = await simulator.handle(
      post(accessToken, "/purchase/authorizations", randomUUID(), manual),
    );
    const orderId = created.kind === "respond" ? JSON.parse(created.body ?? "{}").data.orderId : "";

    const [captured, capturedAgain] = await twice(
      post(accessToken, `/manage/orders/${orderId}/capture`, randomUUID(), {}),
    );
    expect(captured).toMatchObject({ kind: "respond", status: 202 });
    expect(captured).not.toHaveProperty("body");
    expect(capturedAgain).toStrictEqual(captured);

    const invalid = authorizationBody(customerToken, { order: { currency: "XXX" } });
    const [rejected, rejectedAgain] = await twice(
      post(accessToken, "/purchase/authorizations", randomUUID(), invalid),
    );
    expect(rejected).toMatchObject({ status: 400 });
    expect(rejectedAgain).toStrictEqual(rejected);

    const unknown = authorizationBody(randomUUID());
    const [missing, missingAgain] = await twice(
      post(accessToken, "/purchase/authorizations", randomUUID(), unknown),
    );
    expect(missing).toMatchObject({ status: 404 });
    expect(missingAgain).toStrictEqual(missing);

    const [refused, refusedAgain] = await twice(
      post(accessToken, `/manage/orders/${orderId}/cancel`, randomUUID(), {}),
    );
    expect(refused).toMatchObject({ status: 422 });
    expect(refusedAgain).toStrictEqual(refused);
  });

  it("is still exact after the clock moved by a fraction of a millisecond, until the replay hour ends", async () => {
    const { accessToken, customerToken, merchant } = await shop();
    simulator.advanceClock(1023 / 1024);
    const key = randomUUID();
    const body = authorizationBody(customerToken);
    const first = await simulator.handle(post(accessToken, "/purchase/authorizations", key, body));
    simulator.advanceClock(3600_000 - 1_000);
    // Access tokens last an hour too: each call after a move of the clock takes a fresh one.
    const again = post(await accessTokenOf(merchant), "/purchase/authorizations", key, body);
    expect(await simulator.handle(again)).toStrictEqual(first);
    simulator.advanceClock(2_000);
    const late = post(await accessTokenOf(merchant), "/purchase/authorizations", key, body);
    const expired = await simulator.handle(late);
    expect(expired.kind === "respond" && JSON.parse(expired.body ?? "{}").error.errors[0].reason).toBe(
      "IDEMPOTENCY_RESPONSE_EXPIRED",
    );
  });

  // The process clock stands still (virtual time is it plus the advances), so the edges are exact;
  // a clock set back before 1998 with a fraction on top once made the stored times round.
  it.each([
    ["the process clock", undefined],
    ["a clock set back, plus a fraction", 5e11],
  ])(
    "replays up to exactly the replay hour and forgets the key exactly a day later (%s)",
    async (_, setBack) => {
      vi.useFakeTimers({ toFake: ["Date"] });
      if (setBack !== undefined) vi.setSystemTime(setBack);
      const { accessToken, customerToken, merchant } = await shop();
      simulator.advanceClock(0.1644132541237484);
      const body = authorizationBody(customerToken);
      const replayKey = randomUUID();
      const first = await simulator.handle(post(accessToken, "/purchase/authorizations", replayKey, body));
      const retentionKey = randomUUID();
      const kept = await simulator.handle(post(accessToken, "/purchase/authorizations", retentionKey, body));
      simulator.advanceClock(3600_000);
      const atTheHour = post(await accessTokenOf(merchant), "/purchase/authorizations", replayKey, body);
      expect(await simulator.handle(atTheHour)).toStrictEqual(first);
      simulator.advanceClock(1);
      const pastTheHour = post(await accessTokenOf(merchant), "/purchase/authorizations", replayKey, body);
      expect(reasonOf(await simulator.handle(pastTheHour))).toBe("IDEMPOTENCY_RESPONSE_EXPIRED");

      simulator.advanceClock(24 * 3600_000 - 3600_000 - 2);
      const aDayLess1 = post(await accessTokenOf(merchant), "/purchase/authorizations", retentionKey, body);
      expect(reasonOf(await simulator.handle(aDayLess1))).toBe("IDEMPOTENCY_RESPONSE_EXPIRED");
      simulator.advanceClock(1);
      const aDayLater = post(await accessTokenOf(merchant), "/purchase/authorizations", retentionKey, body);
      const runAgain = await simulator.handle(aDayLater);
      expect(runAgain).toMatchObject({ status: kept.kind === "respond" ? kept.status : -1 });
      expect(runAgain).not.toStrictEqual(kept); // a new authorization: the key was forgotten
    },
  );
});

function reasonOf(outcome: SandboxOutcome): string | undefined {
  return outcome.kind === "respond" ? JSON.parse(outcome.body ?? "{}").error?.errors?.[0]?.reason : undefined;
}
