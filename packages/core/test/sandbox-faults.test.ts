import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  DEFAULT_PATHS,
  OutcomeUnknownError,
  outcomeOf,
  type PurchaseAuthClientOptions,
  ServiceUnavailableError,
} from "../src/index.js";
import { validRequest } from "./fixtures.js";
import { openShop, type SandboxServer, startSandbox } from "./sandbox-fixture.js";

// The faults a client must survive, injected by the sandbox over real HTTP: gateway answers before
// and after commit, 429 with Retry-After, a committed 2xx whose body is empty or cut off, and lost
// answers. After each, the client's outcome is compared with what the sandbox really did.

const CREATE = { method: "POST", path: DEFAULT_PATHS.authorizations };

let sandbox: SandboxServer;
beforeAll(async () => {
  sandbox = await startSandbox();
});
beforeEach(() => sandbox.clearFaults());
afterAll(() => sandbox.close());

/** One synchronous create against a fresh merchant, with `fault` armed; what the client said and what the sandbox did. */
async function createUnder(
  fault: Parameters<SandboxServer["injectFault"]>[0],
  options: Partial<PurchaseAuthClientOptions> = {},
) {
  const shop = openShop(sandbox, options);
  sandbox.injectFault(fault);
  const request = validRequest({
    customerToken: shop.customerToken,
    attemptSchedule: { preferSynchronous: true },
  });
  const outcome = await shop.client.authorizations.create(request).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  sandbox.clearFaults();
  const authorizations = sandbox.authorizations({ merchantId: shop.merchantId });
  return { shop, ...outcome, authorizations };
}

describe("a fault once, then the same key: one charge, reported done", () => {
  const cases: Array<[string, Parameters<SandboxServer["injectFault"]>[0]]> = [
    [
      "502 from the gateway after commit",
      { kind: "gateway_error", status: 502, phase: "after_commit", match: CREATE },
    ],
    [
      "504 from the gateway before commit",
      { kind: "gateway_error", status: 504, phase: "before_commit", match: CREATE },
    ],
    [
      "500 from the gateway after commit",
      { kind: "gateway_error", status: 500, phase: "after_commit", match: CREATE },
    ],
    ["429 with Retry-After: 1", { kind: "rate_limited", retryAfterSeconds: 1, match: CREATE }],
    // Busy, not a refusal of the credentials: retried, never an AuthenticationError.
    ["429 from the token endpoint", { kind: "rate_limited", match: { method: "POST", path: "/oauth2/" } }],
    ["a committed 200 with an empty body", { kind: "garbled_success", body: "empty", match: CREATE }],
    ["a committed 200 cut in half", { kind: "garbled_success", body: "garbled", match: CREATE }],
    [
      "the answer held back until after the webhook",
      { kind: "delay_after_commit", latencyMs: 200, match: CREATE },
    ],
  ];
  for (const [name, fault] of cases) {
    it(name, async () => {
      const { result, error, authorizations } = await createUnder(fault);
      expect(error).toBeUndefined();
      expect(authorizations).toHaveLength(1);
      expect(authorizations[0]).toMatchObject({
        status: "Succeeded",
        authorizationId: result?.authorizationId,
      });
      expect(authorizations[0]?.idempotencyKey).toBe(result?.idempotencyKey);
    });
  }
});

describe("faults that outlast the retries", () => {
  it("every answer lost after commit: unknown, with the key; resending it later learns the one charge", async () => {
    const { shop, error, authorizations } = await createUnder({
      kind: "drop_after_commit",
      count: null,
      match: CREATE,
    });
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    const unknown = error as OutcomeUnknownError;
    expect({ outcome: outcomeOf(unknown), retry: unknown.retry }).toEqual({
      outcome: "unknown",
      retry: "same-key",
    });
    expect(authorizations).toHaveLength(1);
    expect(unknown.idempotencyKey).toBe(authorizations[0]?.idempotencyKey);

    // Stored as JSON, resent from "another process" once the service answers again.
    const stored = JSON.parse(JSON.stringify(unknown.write));
    const resent = await shop.client.resendUnknownWrite(stored);
    expect(resent).toMatchObject({
      operation: "authorizations.create",
      result: { authorizationId: authorizations[0]?.authorizationId },
    });
    expect(sandbox.authorizations({ merchantId: shop.merchantId })).toHaveLength(1);
    await shop.client.close();
  });

  it("502s after commit on every attempt: unknown (never a definite failure), one charge", async () => {
    const { error, authorizations } = await createUnder({
      kind: "gateway_error",
      status: 502,
      phase: "after_commit",
      count: null,
      match: CREATE,
    });
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    expect(authorizations).toHaveLength(1);
  });

  it("a timeout, then 503s until the retries run out: unknown, since the first attempt may have charged", async () => {
    const shop = openShop(sandbox, { timeoutMs: 150, maxRetries: 2 });
    await shop.client.customerTokens.get(shop.customerToken); // token cached
    sandbox.injectFault({ kind: "latency", latencyMs: 400, match: CREATE }); // processed, answered too late
    sandbox.injectFault({ kind: "unavailable", count: null, match: CREATE });
    const error = await shop.client.authorizations
      .create(
        validRequest({ customerToken: shop.customerToken, attemptSchedule: { preferSynchronous: true } }),
      )
      .catch((caught: unknown) => caught);
    sandbox.clearFaults();
    expect(OutcomeUnknownError.isInstance(error)).toBe(true);
    expect(ServiceUnavailableError.isInstance(error)).toBe(false);
    expect((error as OutcomeUnknownError).retry).toBe("same-key");
    // Whatever the slow attempt did, the same key can only ever make it one charge.
    expect(sandbox.authorizations({ merchantId: shop.merchantId }).length).toBeLessThanOrEqual(1);
    await shop.client.close();
  });

  it("429 on every attempt: refused, nothing charged, a new attempt later is safe", async () => {
    const { error, authorizations } = await createUnder(
      { kind: "rate_limited", retryAfterSeconds: 1, count: null, match: CREATE },
      // Ends when the retries run out, with the deadline far away: a deadline that cut a slow
      // second attempt under load would make the outcome unknown (and the test flaky).
      { maxRetries: 1, deadlineMs: 30_000, timeoutMs: 10_000 },
    );
    expect(ServiceUnavailableError.isInstance(error)).toBe(true);
    expect({ outcome: outcomeOf(error), retry: (error as ServiceUnavailableError).retry }).toEqual({
      outcome: "refused",
      retry: "new-attempt",
    });
    expect(authorizations).toHaveLength(0);
  });
});

describe("merchant writes under gateway faults", () => {
  it("a capture answered 500 after commit is retried with its key and captured once", async () => {
    const shop = openShop(sandbox);
    const token = shop.token({ captureMode: "Manual" });
    const created = await shop.client.authorizations.create(
      validRequest({ customerToken: token, attemptSchedule: { preferSynchronous: true } }),
    );
    sandbox.injectFault({
      kind: "gateway_error",
      status: 500,
      phase: "after_commit",
      match: { path: "/manage/orders/" },
    });
    const captured = await shop.client.orders.capture(created.orderId!, { amount: "20.00" });
    const order = sandbox.orders({ authorizationId: created.authorizationId })[0]!;
    expect(captured.orderId).toBe(created.orderId);
    expect(order.capturedAmount).toBe("20.00");
    expect(order.operations.filter((operation) => operation.type === "capture")).toHaveLength(1);
    await shop.client.close();
  });
});
