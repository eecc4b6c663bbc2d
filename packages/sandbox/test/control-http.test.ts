import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO, type SandboxServer, startSandbox } from "../src/index.js";
import { accessTokenFor, authorizationBody, call } from "./helpers.js";

// The /sandbox control routes mirror the programmatic control surface.

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox({ demo: true });
});
afterAll(() => sandbox.close());

describe("HTTP control routes", () => {
  it("drive a whole scenario", async () => {
    const merchant = (await call(sandbox, "POST", "/sandbox/merchants", { body: { name: "Shop" } })).json;
    expect(merchant).toMatchObject({ name: "Shop", clientId: expect.any(String), scope: expect.any(String) });
    const token = (
      await call(sandbox, "POST", "/sandbox/customer-tokens", {
        body: { merchantId: merchant.merchantId, failNextAttempts: ["PAYMENT_FAILED"], funds: 1000 },
      })
    ).json;
    expect(token).toMatchObject({ status: "Active", funds: "1000.00", failNextAttempts: ["PAYMENT_FAILED"] });

    const accessToken = await accessTokenFor(sandbox, merchant);
    const created = await call(sandbox, "POST", "/purchase/authorizations", {
      token: accessToken,
      body: authorizationBody(token.customerToken, {
        attemptSchedule: { relative: ["00.00:05:00", "00.00:05:00"] },
      }),
    });
    expect(created.status).toBe(202);

    const advanced = await call(sandbox, "POST", "/sandbox/clock/advance", { body: { ms: 600_000 } });
    expect(advanced.json).toEqual({ now: expect.any(Number), nowIso: expect.any(String) });
    await call(sandbox, "POST", "/sandbox/settle");
    const authorizations = await call(
      sandbox,
      "GET",
      `/sandbox/authorizations?merchantId=${merchant.merchantId}`,
    );
    expect(authorizations.json).toEqual([
      expect.objectContaining({ status: "Succeeded", attempts: [expect.anything(), expect.anything()] }),
    ]);
    expect((await call(sandbox, "GET", "/sandbox/attempts")).json).toHaveLength(2);
    expect(
      (await call(sandbox, "GET", `/sandbox/orders?merchantId=${merchant.merchantId}`)).json,
    ).toHaveLength(1);
    expect((await call(sandbox, "GET", "/sandbox/events")).json.length).toBeGreaterThan(0);
    expect((await call(sandbox, "GET", "/sandbox/token-requests")).json).toHaveLength(1);

    const updated = await call(sandbox, "PATCH", `/sandbox/customer-tokens/${token.customerToken}`, {
      body: { funds: null, paymentMethodExpired: true },
    });
    expect(updated.json).toMatchObject({ funds: null, paymentMethodExpired: true });
    const status = await call(sandbox, "POST", `/sandbox/customer-tokens/${token.customerToken}/status`, {
      body: { status: "Revoked" },
    });
    expect(status.json.status).toBe("Revoked");

    const fault = await call(sandbox, "POST", "/sandbox/faults", {
      body: { kind: "unavailable", count: null },
    });
    expect(fault.json.faultId).toEqual(expect.any(String));
    expect((await call(sandbox, "GET", "/sandbox/faults")).json[0]).toMatchObject({ remaining: null });
    await call(sandbox, "DELETE", "/sandbox/faults");

    const client = await call(sandbox, "POST", "/sandbox/api-clients", {
      body: { merchantId: merchant.merchantId },
    });
    expect(client.json.merchantId).toBe(merchant.merchantId);
    const revoked = await call(sandbox, "POST", "/sandbox/access-tokens/revoke", { body: {} });
    expect(revoked.json).toEqual({ revoked: 1 });

    const webhooks = await call(sandbox, "POST", "/sandbox/webhooks", {
      body: { merchantId: merchant.merchantId, urls: ["http://127.0.0.1:9/hook"] },
    });
    expect(webhooks.json.secrets).toHaveLength(1);
    const delivery = await call(sandbox, "POST", "/sandbox/webhook-delivery", { body: { outOfOrder: true } });
    expect(delivery.json).toEqual({ duplicate: false, outOfOrder: true });
    expect((await call(sandbox, "GET", "/sandbox/stats")).json).toMatchObject({
      authorizations: 1,
      tokensIssued: 1,
    });
  });

  it("reset re-seeds the demo data with its fixed credentials", async () => {
    expect((await call(sandbox, "POST", "/sandbox/reset")).status).toBe(200);
    const demo = (await call(sandbox, "GET", "/sandbox/demo")).json;
    expect(demo.merchant).toMatchObject({ clientId: DEMO.clientId, clientSecret: DEMO.clientSecret });
    expect(demo.tokens.pendingReview).toMatchObject({
      customerToken: DEMO.tokens.pendingReview,
      status: "Pending",
    });
    expect((await call(sandbox, "GET", "/sandbox/authorizations")).json).toEqual([]);
    const accessToken = await accessTokenFor(sandbox, demo.merchant);
    const expectations = [
      [DEMO.tokens.active, 200, undefined],
      [DEMO.tokens.pendingReview, 422, "TOKEN_PENDING"],
      [DEMO.tokens.revoked, 422, "TOKEN_REVOKED"],
      [DEMO.tokens.noFunds, 422, "PAYMENT_METHOD_NO_FUNDS"],
      [DEMO.tokens.needsChallenge, 202, undefined],
    ] as const;
    for (const [customerToken, status, reason] of expectations) {
      const response = await call(sandbox, "POST", "/purchase/authorizations", {
        token: accessToken,
        body: authorizationBody(customerToken, { attemptSchedule: { preferSynchronous: true } }),
      });
      expect([customerToken, response.status, response.json.error?.errors[0]?.reason]).toEqual([
        customerToken,
        status,
        reason,
      ]);
    }
  });

  it("answers 404 envelopes for unknown merchants and tokens", async () => {
    const response = await call(
      sandbox,
      "GET",
      "/sandbox/customer-tokens/00000000-0000-4000-8000-000000000000",
    );
    expect(response.status).toBe(404);
    expect(response.json.error.errors[0].reason).toBe("NOT_FOUND");
  });
});

describe("control input", () => {
  it("rejects a misspelt field instead of ignoring it", async () => {
    const { merchantId } = sandbox.createMerchant();
    const response = await call(sandbox, "POST", "/sandbox/customer-tokens", {
      body: { merchantId, fund: "1.00" },
    });
    expect(response.status).toBe(400);
    expect(response.json.error.errors[0].message).toMatch(/unknown field fund/);
    expect(() => sandbox.createCustomerToken({ merchantId, funds: "-1" })).toThrow(/funds must be/);
  });
});
