import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  AbortedError,
  AuthenticationError,
  OutcomeUnknownError,
  PurchaseAuthClient,
  ServiceUnavailableError,
  ValidationError,
} from "../src/index.js";
import { validRequest } from "./fixtures.js";
import { FAST_RETRIES, openShop, type SandboxServer, startSandbox } from "./sandbox-fixture.js";

const CREATE = { method: "POST", path: "/purchase/authorizations" };

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startSandbox();
});
beforeEach(() => sandbox.clearFaults());
afterAll(() => sandbox.close());

function chargeOf(shop: ReturnType<typeof openShop>) {
  return validRequest({ customerToken: shop.customerToken, attemptSchedule: { preferSynchronous: true } });
}

/** Each logical charge must exist exactly once at the service. */
function authorizationsOf(shop: ReturnType<typeof openShop>) {
  return sandbox.authorizations({ merchantId: shop.merchantId });
}

/**
 * A token read against a service that answers reads after 1 s, with 50 ms attempts and up to 11 of
 * them: the error it ends with, and how many attempts reached the service.
 */
async function slowRead(clientDeadlineMs: number, options?: { deadlineMs: number }) {
  const shop = openShop(sandbox, { timeoutMs: 50, deadlineMs: clientDeadlineMs, maxRetries: 10 });
  await shop.client.customerTokens.get(shop.customerToken); // the access token, outside the test
  const faultId = sandbox.injectFault({
    kind: "latency",
    match: { method: "GET", path: "/purchase/customer-tokens/" },
    count: null,
    latencyMs: 1_000,
  });
  const error = await shop.client.customerTokens.get(shop.customerToken, options).catch((e) => e);
  return { error, attempts: sandbox.faults().find((fault) => fault.faultId === faultId)?.fired ?? 0 };
}

describe("retries with the same idempotency key", () => {
  it("retries a 503 and charges once", async () => {
    const shop = openShop(sandbox);
    sandbox.injectFault({ kind: "unavailable", match: CREATE, count: 2 });
    const result = await shop.client.authorizations.create(chargeOf(shop));
    expect(result.synchronous).toBe(true);
    expect(authorizationsOf(shop)).toHaveLength(1);
  });

  it("recovers a connection dropped after the service committed: the retry replays, no second charge", async () => {
    const shop = openShop(sandbox);
    sandbox.injectFault({ kind: "drop_after_commit", match: CREATE, count: 1 });
    const result = await shop.client.authorizations.create(chargeOf(shop));
    const recorded = authorizationsOf(shop);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      authorizationId: result.authorizationId,
      idempotencyKey: result.idempotencyKey,
    });
  });

  it("waits out IDEMPOTENCY_REQUEST_IN_PROGRESS and charges once", async () => {
    const shop = openShop(sandbox);
    sandbox.injectFault({ kind: "in_progress", match: CREATE, count: 2 });
    await shop.client.authorizations.create(chargeOf(shop));
    expect(authorizationsOf(shop)).toHaveLength(1);
  });

  it("times out a slow attempt, retries while the first is still in progress, and charges once", async () => {
    // Retries for up to ~3 s while the first attempt takes 300 ms: a loaded machine (CI runs every
    // package's tests at once) can stretch 300 ms a long way, and the retries must outlast it.
    const shop = openShop(sandbox, {
      timeoutMs: 100,
      maxRetries: 10,
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 400,
    });
    sandbox.injectFault({ kind: "latency", match: CREATE, count: 1, latencyMs: 300 });
    const result = await shop.client.authorizations.create(chargeOf(shop));
    const recorded = authorizationsOf(shop);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.authorizationId).toBe(result.authorizationId);
  });

  it("retries a reset on a reused socket once even with maxRetries 0", async () => {
    const shop = openShop(sandbox, { maxRetries: 0 });
    await shop.client.customerTokens.get(shop.customerToken); // the socket is now pooled
    sandbox.injectFault({ kind: "reset_before_processing", match: CREATE, count: 1 });
    await shop.client.authorizations.create(chargeOf(shop));
    expect(authorizationsOf(shop)).toHaveLength(1);
  });

  it("never retries with maxRetries 0 otherwise", async () => {
    const shop = openShop(sandbox, { maxRetries: 0 });
    sandbox.injectFault({ kind: "unavailable", match: CREATE, count: 1 });
    const before = sandbox.stats().requests;
    // A 503 does not say that nothing happened (supplement D counts it among unknown outcomes).
    await expect(shop.client.authorizations.create(chargeOf(shop))).rejects.toBeInstanceOf(
      OutcomeUnknownError,
    );
    expect(sandbox.stats().requests - before).toBe(2); // token + one create
  });
});

describe("when retries run out", () => {
  it("reports lasting 503s as an unknown outcome with the key, which later resolves what happened", async () => {
    const shop = openShop(sandbox, { maxRetries: 2 });
    sandbox.injectFault({ kind: "unavailable", match: CREATE, count: null });
    const request = chargeOf(shop);
    const error = await shop.client.authorizations.create(request).catch((e) => e);
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ outcome: "unknown", retry: "same-key" });
    expect(error.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(authorizationsOf(shop)).toHaveLength(0);
    sandbox.clearFaults();
    const resolved = await shop.client.resendUnknownWrite(error.write);
    expect(resolved.operation).toBe("authorizations.create");
    expect(authorizationsOf(shop)).toHaveLength(1);
  });

  it("reports dropped connections as OutcomeUnknownError; the same key later resolves to exactly one charge", async () => {
    const shop = openShop(sandbox, { maxRetries: 2 });
    sandbox.injectFault({ kind: "drop_after_commit", match: CREATE, count: null });
    const request = chargeOf(shop);
    const error = await shop.client.authorizations.create(request).catch((e) => e);
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    expect(error.retry).toBe("same-key");
    expect(authorizationsOf(shop)).toHaveLength(1); // it did happen, we could not hear it

    sandbox.clearFaults();
    const resolved = await shop.client.authorizations.create(request, {
      idempotencyKey: error.idempotencyKey,
    });
    expect(authorizationsOf(shop)).toHaveLength(1);
    expect(resolved.authorizationId).toBe(authorizationsOf(shop)[0]?.authorizationId);
  });

  it("respects the total deadline", async () => {
    const { error, attempts } = await slowRead(200);
    // A read changes nothing: no unknown outcome, just a service that did not answer in time.
    expect(ServiceUnavailableError.isInstance(error)).toBe(true);
    // Every attempt but the last waits out its full 50 ms timeout (the last gets what is left of
    // the deadline), so a 200 ms deadline leaves room for at most 5 of the 11 that maxRetries would
    // allow: the deadline, not the retry count, ended the call. At least one attempt; on a loaded
    // machine the first may eat most of the deadline.
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(5);
  });

  it("ends a call at its own deadlineMs, sooner than the client's, with the write's outcome unknown", async () => {
    const shop = openShop(sandbox, { timeoutMs: 50, deadlineMs: 30_000, maxRetries: 10 });
    await shop.client.customerTokens.get(shop.customerToken); // the access token, outside the test
    const faultId = sandbox.injectFault({ kind: "latency", match: CREATE, count: null, latencyMs: 1_000 });
    const error = await shop.client.authorizations
      .create(chargeOf(shop), { deadlineMs: 200 })
      .catch((e) => e);
    // Each attempt may have reached the service: unknown, to be resent with the same key.
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    // The attempts after the first meet the first still in progress (409), so the fault fires once.
    expect(sandbox.faults().find((fault) => fault.faultId === faultId)?.fired).toBe(1);
    sandbox.clearFaults();
    // The delayed attempts are still being answered: the key is "in progress" until they are.
    await vi.waitFor(() => shop.client.resendUnknownWrite(error.write), { timeout: 10_000, interval: 100 });
    expect(authorizationsOf(shop)).toHaveLength(1);
  });

  it("ends a read at its own deadlineMs, sooner than the client's deadline and retries would", async () => {
    const { error, attempts } = await slowRead(30_000, { deadlineMs: 200 });
    expect(ServiceUnavailableError.isInstance(error)).toBe(true);
    // Without it, the client's 30 s deadline would let all 11 attempts of maxRetries run.
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(5);
  });

  it("never lets a call's deadlineMs outlast the client's deadlineMs", async () => {
    const { error, attempts } = await slowRead(200, { deadlineMs: 3_600_000 });
    expect(ServiceUnavailableError.isInstance(error)).toBe(true);
    expect(attempts).toBeLessThanOrEqual(5);
  });

  it.each([0, -1, 1.5, 3_600_001, Number.NaN, Number.POSITIVE_INFINITY])(
    "refuses deadlineMs %s with a ValidationError naming it, before sending anything",
    async (deadlineMs) => {
      const shop = openShop(sandbox);
      const error = await shop.client.authorizations.create(chargeOf(shop), { deadlineMs }).catch((e) => e);
      expect(ValidationError.isInstance(error)).toBe(true);
      expect(error.issues.map((issue: { path: string }) => issue.path)).toEqual(["deadlineMs"]);
      expect(authorizationsOf(shop)).toHaveLength(0);
    },
  );

  it("reports an abort before sending as not sent (AbortedError), and after sending as an unknown outcome", async () => {
    const shop = openShop(sandbox);
    const aborted = AbortSignal.abort(new Error("stop"));
    const early = await shop.client.authorizations
      .create(chargeOf(shop), { signal: aborted })
      .catch((e) => e);
    expect(AbortedError.isInstance(early)).toBe(true);
    expect(early).toMatchObject({ outcome: "not_sent" });
    expect(String(early.cause)).toContain("stop");

    // Aborted once the request has reached the service (its fault fired), not after a guessed
    // delay: on a loaded machine the token fetch alone can take longer than any fixed wait.
    const faultId = sandbox.injectFault({ kind: "latency", match: CREATE, count: 1, latencyMs: 2_000 });
    const controller = new AbortController();
    const pending = shop.client.authorizations.create(chargeOf(shop), { signal: controller.signal });
    // A fault with count 1 leaves the list of active faults when it fires.
    const reached = () => !sandbox.faults().some((fault) => fault.faultId === faultId);
    while (!reached()) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await pending.catch((e) => e);
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
  });
});

describe("token endpoint failures", () => {
  it("retries a token endpoint outage and then succeeds", async () => {
    const shop = openShop(sandbox);
    sandbox.injectFault({ kind: "token_endpoint_down", count: 2 });
    await shop.client.authorizations.create(chargeOf(shop));
    expect(authorizationsOf(shop)).toHaveLength(1);
  });

  it("reports a lasting outage as not sent (ServiceUnavailableError), not as bad credentials", async () => {
    const shop = openShop(sandbox, { maxRetries: 1 });
    sandbox.injectFault({ kind: "token_endpoint_down", count: null });
    const error = await shop.client.authorizations.create(chargeOf(shop)).catch((e) => e);
    expect(ServiceUnavailableError.isInstance(error)).toBe(true);
    expect(AuthenticationError.isInstance(error)).toBe(false);
    // Nothing was sent: a new attempt (even with a new key) cannot charge twice.
    expect(error).toMatchObject({ outcome: "not_sent", retry: "new-attempt" });
    expect(authorizationsOf(shop)).toHaveLength(0);
  });

  it("recovers from a token revoked early (401 → refresh → retry once)", async () => {
    const shop = openShop(sandbox, { maxRetries: 0 });
    await shop.client.customerTokens.get(shop.customerToken);
    sandbox.injectFault({ kind: "revoke_access_token", match: CREATE, count: 1 });
    await shop.client.authorizations.create(chargeOf(shop));
    expect(authorizationsOf(shop)).toHaveLength(1);
  });
});

describe("secret hygiene under failure", () => {
  it("keeps the client secret and access tokens out of every log line and error", async () => {
    const shop = openShop(sandbox);
    const lines: string[] = [];
    const record = (level: string) => (message: string, fields?: Record<string, unknown>) =>
      lines.push(`${level} ${message} ${JSON.stringify(fields)}`);
    const client = new PurchaseAuthClient({
      ...shop.credentials,
      ...FAST_RETRIES,
      maxRetries: 2,
      logger: { debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") },
    });
    await client.customerTokens.get(shop.customerToken);
    sandbox.revokeAccessTokens({ clientId: shop.clientId }); // the next call gets a 401 and refreshes
    sandbox.injectFault({ kind: "drop_after_commit", match: CREATE, count: null }); // then retries
    const error = await client.authorizations.create(chargeOf(shop)).catch((e) => e);
    expect(lines.length).toBeGreaterThan(2);
    const issued = sandbox.tokenRequests().filter((request) => request.clientId === shop.clientId);
    expect(issued.length).toBe(2);
    await client.customerTokens.get(shop.customerToken); // a path that holds the customer token
    sandbox.injectFault({ kind: "unavailable", match: { method: "GET" }, count: 1 }); // logged as a retry
    await client.customerTokens.get(shop.customerToken);
    const everything = [...lines, JSON.stringify(error), String(error), error.stack ?? ""].join("\n");
    expect(everything).not.toContain(shop.customerToken);
    expect(everything).not.toContain(shop.clientSecret);
    expect(everything).not.toMatch(/Bearer\s+\S+/);
    expect(everything).not.toContain("access_token");
  });
});
