import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KeyMemory } from "../src/http/key-memory.js";
import { DEFAULT_PATHS, IdempotencyWindowPassedError, OutcomeUnknownError, outcomeOf } from "../src/index.js";
import { validRequest } from "./fixtures.js";
import { openShop, type SandboxServer, type Shop, startSandbox } from "./sandbox-fixture.js";

// The README's way out of an unknown outcome is to repeat the write with `error.idempotencyKey`.
// Such a repeat that then sends nothing (429 on every try, an abort) once said "nothing was
// charged or changed" with the advice of a new key, while its first call had charged: a new key
// would charge twice. A repeat in the same client now starts from what the first call may have done.

const CREATE = { method: "POST", path: DEFAULT_PATHS.authorizations };

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startSandbox();
});
beforeEach(() => sandbox.clearFaults());
afterAll(() => sandbox.close());

/** A create whose every answer is lost after the service committed it: an unknown outcome. */
async function chargedUnanswered(shop: Shop) {
  sandbox.injectFault({
    kind: "gateway_error",
    status: 502,
    phase: "after_commit",
    count: null,
    match: CREATE,
  });
  const request = validRequest({
    customerToken: shop.customerToken,
    attemptSchedule: { preferSynchronous: true },
  });
  const error = await shop.client.authorizations.create(request).catch((caught: unknown) => caught);
  sandbox.clearFaults();
  expect(OutcomeUnknownError.isInstance(error)).toBe(true);
  expect(sandbox.authorizations({ merchantId: shop.merchantId, status: "Succeeded" })).toHaveLength(1);
  return { request, first: error as OutcomeUnknownError };
}

describe("a write repeated with the key of an unknown outcome, in the same client", () => {
  it("429 on every try of the repeat: still unknown, from the first send's time", async () => {
    const shop = openShop(sandbox, { maxRetries: 1 });
    const { request, first } = await chargedUnanswered(shop);
    sandbox.injectFault({ kind: "rate_limited", retryAfterSeconds: 0, count: null, match: CREATE });
    const repeat = await shop.client.authorizations
      .create(request, { idempotencyKey: first.idempotencyKey })
      .catch((caught: unknown) => caught);
    expect(outcomeOf(repeat)).toBe("unknown");
    expect((repeat as OutcomeUnknownError).retry).toBe("same-key");
    expect((repeat as OutcomeUnknownError).firstSentAt).toEqual(first.firstSentAt);
    await shop.client.close();
  });

  it("a repeat aborted before it sends: still unknown", async () => {
    const shop = openShop(sandbox);
    const { request, first } = await chargedUnanswered(shop);
    const repeat = await shop.client.authorizations
      .create(request, { idempotencyKey: first.idempotencyKey, signal: AbortSignal.abort() })
      .catch((caught: unknown) => caught);
    expect(outcomeOf(repeat)).toBe("unknown");
    await shop.client.close();
  });

  it("a repeat that is answered resolves to the first call's charge, and the key is forgotten", async () => {
    const shop = openShop(sandbox);
    const { request, first } = await chargedUnanswered(shop);
    const resolved = await shop.client.authorizations.create(request, {
      idempotencyKey: first.idempotencyKey,
    });
    const [charge] = sandbox.authorizations({ merchantId: shop.merchantId, status: "Succeeded" });
    expect(resolved.authorizationId).toBe(charge?.authorizationId);
    // Known now: an abort of a later call with the key is what it says, nothing sent by that call.
    const aborted = await shop.client.authorizations
      .create(request, { idempotencyKey: first.idempotencyKey, signal: AbortSignal.abort() })
      .catch((caught: unknown) => caught);
    expect(outcomeOf(aborted)).toBe("not_sent");
    await shop.client.close();
  });
});

describe("KeyMemory", () => {
  it("keeps at most its bound, forgetting the oldest first", () => {
    const keys = new KeyMemory(2);
    const at = new Date(0);
    keys.remember("a", at);
    keys.remember("b", at);
    keys.remember("a", at); // remembered again: now the newest
    keys.remember("c", at);
    expect([keys.firstSentAt("a"), keys.firstSentAt("b"), keys.firstSentAt("c")]).toEqual([
      at,
      undefined,
      at,
    ]);
    keys.forget("a");
    expect(keys.firstSentAt("a")).toBeUndefined();
  });

  it("tells a call whether another with its key ran beside it, and their first send", () => {
    const keys = new KeyMemory();
    const alone = keys.start("k");
    expect(keys.overlapped(alone)).toBe(false);
    keys.finish(alone);

    const first = keys.start("k");
    const second = keys.start("k");
    expect([keys.overlapped(first), keys.overlapped(second)]).toEqual([true, true]);
    const at = new Date("2026-01-01T00:00:00Z");
    keys.sent(second, at);
    keys.sent(first, new Date(at.getTime() + 1000));
    expect(keys.firstSentBeside(first)).toEqual(at);
    keys.finish(second); // ended (a success, say) before the first did: still seen by it
    expect(keys.overlapped(first)).toBe(true);
    keys.finish(first);

    const later = keys.start("k");
    expect(keys.overlapped(later)).toBe(false); // none left over from the calls that finished
    expect(keys.firstSentBeside(later)).toBeUndefined();
    keys.finish(later);
  });
});

describe("a write whose firstSentAt is later than the client's clock", () => {
  it("is not sent, and its outcome stays unknown (never not sent, which invites a new key)", async () => {
    const shop = openShop(sandbox);
    const before = sandbox.stats().requests;
    const error = await shop.client.authorizations
      .create(validRequest({ customerToken: shop.customerToken }), {
        idempotencyKey: "0f8fad5b-d9cb-469f-a165-70867728950e",
        firstSentAt: new Date(Date.now() + 3_600_000), // another machine's clock, an hour ahead
      })
      .catch((caught: unknown) => caught);
    expect(IdempotencyWindowPassedError.isInstance(error)).toBe(true);
    expect([outcomeOf(error), (error as IdempotencyWindowPassedError).retry]).toEqual(["unknown", "no"]);
    expect((error as Error).message).toMatch(/firstSentAt .* is later than this client's clock/);
    expect(sandbox.stats().requests).toBe(before);
    await shop.client.close();
  });
});
