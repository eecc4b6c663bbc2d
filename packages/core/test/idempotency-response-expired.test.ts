import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdempotencyWindowPassedError, outcomeOf, PurchaseAuthClient } from "../src/index.js";
import { validRequest } from "./fixtures.js";
import { FAST_RETRIES, openShop, type SandboxServer, startSandbox } from "./sandbox-fixture.js";

// IDEMPOTENCY_RESPONSE_EXPIRED says the service stored a response for the key more than its replay
// hour ago. When this client had never sent the key, someone else did (another process, a restarted
// one): the error must say so, not claim this client sent it past the window, and must keep the
// service's reason and request id.

const KEY = "0f8fad5b-d9cb-469f-a165-70867728950e";

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());

/** A charge with KEY by one process, then the service's clock two hours on. */
async function keyUsedTwoHoursAgo() {
  const shop = openShop(sandbox);
  const request = validRequest({
    customerToken: shop.customerToken,
    attemptSchedule: { preferSynchronous: true },
  });
  await shop.client.authorizations.create(request, { idempotencyKey: KEY });
  await shop.client.close();
  sandbox.advanceClock(2 * 3600_000); // past the replay hour, within the 24 hours the key is kept
  // Another process: a client that never sent the key.
  const other = new PurchaseAuthClient({ ...shop.credentials, ...FAST_RETRIES });
  return { shop, other, request };
}

describe("IDEMPOTENCY_RESPONSE_EXPIRED", () => {
  it("on this client's first send: unknown, the service's reason kept, no claim of an earlier send", async () => {
    const { shop, other, request } = await keyUsedTwoHoursAgo();
    const error = await other.authorizations
      .create(request, { idempotencyKey: KEY })
      .catch((caught: unknown) => caught);
    await other.close();

    expect(IdempotencyWindowPassedError.isInstance(error)).toBe(true);
    const expired = error as IdempotencyWindowPassedError;
    expect([outcomeOf(expired), expired.retry]).toEqual(["unknown", "no"]);
    expect(expired).toMatchObject({
      status: 422,
      reason: "IDEMPOTENCY_RESPONSE_EXPIRED",
      idempotencyKey: KEY,
    });
    expect(expired.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(expired.message).not.toMatch(/was first sent at/);
    expect(expired.message).toMatch(/stored response for this idempotency key has expired/);
    expect(expired.message).toMatch(/used before/);
    // Nothing charged twice.
    expect(sandbox.authorizations({ merchantId: shop.merchantId })).toHaveLength(1);
  });

  it("on a resend of a key this client sent: says when it was first sent, reason kept", async () => {
    const { other, request } = await keyUsedTwoHoursAgo();
    // Within the window by our clock, past it by the service's: the service's word decides.
    const firstSentAt = new Date(Date.now() - 10 * 60_000);
    const error = await other.authorizations
      .create(request, { idempotencyKey: KEY, firstSentAt })
      .catch((caught: unknown) => caught);
    await other.close();

    expect(IdempotencyWindowPassedError.isInstance(error)).toBe(true);
    const expired = error as IdempotencyWindowPassedError;
    expect([outcomeOf(expired), expired.retry]).toEqual(["unknown", "no"]);
    expect(expired).toMatchObject({ status: 422, reason: "IDEMPOTENCY_RESPONSE_EXPIRED", firstSentAt });
    expect(expired.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(expired.message).toContain(`was first sent at ${firstSentAt.toISOString()}`);
  });
});
