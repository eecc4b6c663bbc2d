import { ClientCredentials } from "simple-oauth2";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { accessTokenFor, call, errorReasons, openShop, requestToken } from "./helpers.js";

let sandbox: SandboxServer;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

function credentialsForm(merchant: { clientId: string; clientSecret: string; scope: string }) {
  return {
    grant_type: "client_credentials",
    client_id: merchant.clientId,
    client_secret: merchant.clientSecret,
    scope: merchant.scope,
  };
}

function basic(clientId: string, clientSecret: string): string {
  // RFC 6749 2.3.1: form-encode each part, then base64 "id:secret".
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+");
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString("base64")}`;
}

describe("token endpoint", () => {
  it("issues a bearer token for client credentials in the body, not cacheable", async () => {
    const merchant = sandbox.createMerchant();
    const response = await requestToken(sandbox, credentialsForm(merchant));
    expect(response.status).toBe(200);
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.json).toEqual({
      token_type: "Bearer",
      expires_in: 3600,
      ext_expires_in: 3600,
      access_token: expect.stringMatching(/^[\w-]{40,}$/),
    });
  });

  it("accepts HTTP Basic client authentication with form-encoded id and secret", async () => {
    const merchant = sandbox.createMerchant();
    const client = sandbox.createApiClient({
      merchantId: merchant.merchantId,
      clientSecret: "s3cr3t: +&%/é",
    });
    const response = await requestToken(
      sandbox,
      { grant_type: "client_credentials", scope: client.scope },
      { authorization: basic(client.clientId, client.clientSecret) },
    );
    expect(response.status).toBe(200);
    expect(response.json.token_type).toBe("Bearer");
  });

  it("answers RFC 6749 errors", async () => {
    const merchant = sandbox.createMerchant();
    const form = credentialsForm(merchant);

    const wrongSecret = await requestToken(sandbox, { ...form, client_secret: "nope" });
    expect(wrongSecret.status).toBe(401);
    expect(wrongSecret.json.error).toBe("invalid_client");
    expect(wrongSecret.headers["www-authenticate"]).toBeUndefined();

    const wrongBasic = await requestToken(
      sandbox,
      { grant_type: "client_credentials", scope: merchant.scope },
      { authorization: basic(merchant.clientId, "nope") },
    );
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.json.error).toBe("invalid_client");
    expect(wrongBasic.headers["www-authenticate"]).toMatch(/^Basic /);

    const unknownClient = await requestToken(sandbox, { ...form, client_id: "someone-else" });
    expect(unknownClient.status).toBe(401);

    const noCredentials = await requestToken(sandbox, {
      grant_type: "client_credentials",
      scope: merchant.scope,
    });
    expect(noCredentials.json.error).toBe("invalid_client");

    const grant = await requestToken(sandbox, { ...form, grant_type: "password" });
    expect([grant.status, grant.json.error]).toEqual([400, "unsupported_grant_type"]);

    const scope = await requestToken(sandbox, { ...form, scope: "api://other/.default" });
    expect([scope.status, scope.json.error]).toEqual([400, "invalid_scope"]);

    const { grant_type: _, ...withoutGrant } = form;
    const missingGrant = await requestToken(sandbox, withoutGrant);
    expect([missingGrant.status, missingGrant.json.error]).toEqual([400, "invalid_request"]);

    const bothMethods = await requestToken(sandbox, form, {
      authorization: basic(merchant.clientId, merchant.clientSecret),
    });
    expect([bothMethods.status, bothMethods.json.error]).toEqual([400, "invalid_request"]);

    const json = await call(sandbox, "POST", "/oauth2/v2.0/token", { body: form });
    expect([json.status, json.json.error]).toEqual([400, "invalid_request"]);

    const repeated = await call(sandbox, "POST", "/oauth2/v2.0/token", {
      rawBody: `${new URLSearchParams(form)}&scope=x`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect([repeated.status, repeated.json.error]).toEqual([400, "invalid_request"]);
    for (const response of [wrongSecret, grant, scope, missingGrant]) {
      expect(response.json.error_description).toEqual(expect.any(String));
    }
  });

  it("records token requests so tests can check a client's caching", async () => {
    const merchant = sandbox.createMerchant();
    await accessTokenFor(sandbox, merchant);
    await requestToken(sandbox, { ...credentialsForm(merchant), client_secret: "wrong" });
    expect(sandbox.tokenRequests()).toEqual([
      expect.objectContaining({
        clientId: merchant.clientId,
        authMethod: "body",
        outcome: "issued",
        status: 200,
      }),
      expect.objectContaining({ clientId: merchant.clientId, outcome: "invalid_client", status: 401 }),
    ]);
    expect(sandbox.stats().tokensIssued).toBe(1);
  });

  it("answers 503 temporarily_unavailable while the token endpoint is down", async () => {
    const merchant = sandbox.createMerchant();
    sandbox.injectFault({ kind: "token_endpoint_down", count: 2 });
    for (let i = 0; i < 2; i++) {
      const response = await requestToken(sandbox, credentialsForm(merchant));
      expect([response.status, response.json.error]).toEqual([503, "temporarily_unavailable"]);
    }
    expect((await requestToken(sandbox, credentialsForm(merchant))).status).toBe(200);
  });
});

describe("simple-oauth2 (an off-the-shelf OAuth 2.0 client) obtains a token unchanged", () => {
  for (const authorizationMethod of ["header", "body"] as const) {
    it(`with authorizationMethod ${authorizationMethod}`, async () => {
      const merchant = sandbox.createMerchant();
      const client = new ClientCredentials({
        client: { id: merchant.clientId, secret: merchant.clientSecret },
        auth: { tokenHost: sandbox.url, tokenPath: "/oauth2/v2.0/token" },
        options: { authorizationMethod },
      });
      const token = await client.getToken({ scope: merchant.scope });
      expect(token.token.token_type).toBe("Bearer");
      expect(token.expired()).toBe(false);
      const shop = sandbox.createCustomerToken({ merchantId: merchant.merchantId });
      const response = await call(sandbox, "GET", `/purchase/customer-tokens/${shop.customerToken}`, {
        token: String(token.token.access_token),
      });
      expect(response.status).toBe(200);
      expect(sandbox.tokenRequests()[0]?.authMethod).toBe(
        authorizationMethod === "header" ? "basic" : "body",
      );
    });
  }
});

describe("bearer tokens", () => {
  it("expire on the virtual clock", async () => {
    const shop = await openShop(sandbox);
    const path = `/purchase/customer-tokens/${shop.customerToken}`;
    sandbox.advanceClock(3599_000);
    expect((await call(sandbox, "GET", path, { token: shop.accessToken })).status).toBe(200);
    sandbox.advanceClock(1_000);
    const expired = await call(sandbox, "GET", path, { token: shop.accessToken });
    expect(expired.status).toBe(401);
    expect(errorReasons(expired)).toEqual([]);
    expect(expired.headers["www-authenticate"]).toBe('Bearer error="invalid_token"');
    const fresh = await accessTokenFor(sandbox, shop.merchant);
    expect((await call(sandbox, "GET", path, { token: fresh })).status).toBe(200);
  });

  it("can be revoked, per client or all", async () => {
    const shop = await openShop(sandbox);
    const other = await openShop(sandbox);
    expect(sandbox.revokeAccessTokens({ clientId: shop.merchant.clientId })).toBe(1);
    const path = (token: string) => `/purchase/customer-tokens/${token}`;
    expect((await call(sandbox, "GET", path(shop.customerToken), { token: shop.accessToken })).status).toBe(
      401,
    );
    expect((await call(sandbox, "GET", path(other.customerToken), { token: other.accessToken })).status).toBe(
      200,
    );
    expect(sandbox.revokeAccessTokens()).toBe(1);
    expect((await call(sandbox, "GET", path(other.customerToken), { token: other.accessToken })).status).toBe(
      401,
    );
  });

  it("are revoked just before the check by the revoke_access_token fault", async () => {
    const shop = await openShop(sandbox);
    sandbox.injectFault({ kind: "revoke_access_token" });
    const path = `/purchase/customer-tokens/${shop.customerToken}`;
    expect((await call(sandbox, "GET", path, { token: shop.accessToken })).status).toBe(401);
    expect((await call(sandbox, "GET", path, { token: shop.accessToken })).status).toBe(401);
    const fresh = await accessTokenFor(sandbox, shop.merchant);
    expect((await call(sandbox, "GET", path, { token: fresh })).status).toBe(200);
  });
});
