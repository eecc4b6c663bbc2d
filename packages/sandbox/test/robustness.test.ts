import { connect } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import { authorizationBody, call, errorReasons, openShop, type Shop } from "./helpers.js";

// Transport-level answers (415, 413, malformed JSON, unknown routes) and garbage that must never
// crash the server: every answer is an error envelope.

let sandbox: SandboxServer;
let shop: Shop;

beforeAll(async () => {
  sandbox = await startSandbox({ maxBodyBytes: 64 * 1024 });
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  sandbox.reset();
  shop = await openShop(sandbox);
});

/** `token: null` sends no Authorization header. */
function post(
  rawBody: string | Buffer,
  contentType = "application/json",
  token: string | null = shop.accessToken,
) {
  return call(sandbox, "POST", "/purchase/authorizations", {
    ...(token === null ? {} : { token }),
    rawBody,
    headers: { "content-type": contentType },
  });
}

describe("transport errors", () => {
  it("415 when the Content-Type is not application/json", async () => {
    const body = JSON.stringify(authorizationBody(shop.customerToken));
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx"]) {
      const response = await post(body, type);
      expect([response.status, errorReasons(response)]).toEqual([415, []]);
    }
    expect((await post(body, "Application/JSON; charset=utf-8")).status).toBe(202);
  });

  it("413 when the body is over the limit", async () => {
    const response = await post(JSON.stringify({ padding: "x".repeat(65 * 1024) }));
    expect([response.status, errorReasons(response)]).toEqual([413, []]);
    expect((await post(JSON.stringify(authorizationBody(shop.customerToken)))).status).toBe(202); // same connection pool, still fine
  });

  it("checks in order: 401 before 415 before 413 before malformed JSON", async () => {
    const huge = `{${"x".repeat(65 * 1024)}`;
    expect((await post(huge, "text/plain", null)).status).toBe(401);
    expect((await post(huge, "text/plain")).status).toBe(415);
    expect((await post(huge)).status).toBe(413);
    expect((await post("{")).status).toBe(400);
  });

  it("400 INVALID_REQUEST for malformed JSON or a body that is not UTF-8", async () => {
    for (const body of ["{", "", "{'a':1}", Buffer.from([0xff, 0xfe, 0x7b, 0x7d])]) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(errorReasons(response)).toEqual(["INVALID_REQUEST"]);
    }
  });

  it("404 for unknown routes, 405 with Allow for a wrong method", async () => {
    for (const path of [
      "/",
      "/nope",
      "/purchase/authorizations/",
      "/purchase/authorizations/x",
      "/manage/orders",
    ]) {
      const response = await call(sandbox, "GET", path, { token: shop.accessToken });
      expect([path, response.status, errorReasons(response)]).toEqual([path, 404, []]);
    }
    const wrongMethod = await call(sandbox, "PUT", "/purchase/authorizations", { token: shop.accessToken });
    expect([wrongMethod.status, errorReasons(wrongMethod)]).toEqual([405, []]);
    expect(wrongMethod.headers.allow).toBe("POST");
    expect(wrongMethod.json.error.message).toBe("Method Not Allowed");
  });
});

describe("garbage input", () => {
  /** A small deterministic generator, so a failure can be replayed. */
  function randomBytes(seed: number, length: number): Buffer {
    const bytes = Buffer.alloc(length);
    let state = seed;
    for (let i = 0; i < length; i++) {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      bytes[i] = state & 0xff;
    }
    return bytes;
  }

  it("always answers with an envelope and stays up", async () => {
    const bodies: Array<string | Buffer> = [
      ...Array.from({ length: 20 }, (_, seed) => randomBytes(seed + 1, 1 + seed * 97)),
      "[".repeat(20_000) + "]".repeat(20_000),
      `{"customerToken":"${shop.customerToken}","order":${"[".repeat(30_000)}${"]".repeat(30_000)}}`,
      `{"customerToken":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`,
      JSON.stringify({ customerToken: "x".repeat(60_000) }),
      JSON.stringify({
        customerToken: shop.customerToken,
        order: { items: Array(2000).fill({ id: 1 }), currency: 7 },
      }),
      JSON.stringify(
        authorizationBody(shop.customerToken, {
          order: { items: [{ id: "a", description: "b", unitPrice: "1e400", quantity: "1e9", vat: "NaN" }] },
        }),
      ),
      JSON.stringify(
        authorizationBody(shop.customerToken, {
          attemptSchedule: { relative: "00.00:00:01", absolute: [1, null] },
        }),
      ),
      JSON.stringify({ __proto__: { admin: true }, constructor: { prototype: {} }, order: null }),
      "null",
      "42",
      '"string"',
      "[]",
      "true",
    ];
    for (const body of bodies) {
      const response = await post(body);
      expect(response.status).toBe(400);
      errorReasons(response); // asserts the envelope
    }
    const wrongTypes = await post(
      JSON.stringify({
        customerToken: 1,
        storeId: [],
        order: { items: "x", currency: {}, captureMode: "Sometimes" },
        attemptSchedule: 3,
      }),
    );
    expect(
      wrongTypes.json.error.errors.every((entry: { reason: string }) => entry.reason === "INVALID_REQUEST"),
    ).toBe(true);
    expect((await post(JSON.stringify(authorizationBody(shop.customerToken)))).status).toBe(202);
  });

  it("answers an unparseable HTTP request with 400 and keeps serving", async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(sandbox.url).port), "127.0.0.1");
      let data = "";
      socket.on("data", (chunk) => {
        data += chunk.toString();
      });
      socket.on("end", () => resolve(data));
      socket.on("error", reject);
      socket.write("THIS IS NOT HTTP\r\n\r\n");
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(answer).toContain('"code":400');
    const response = await call(sandbox, "GET", `/purchase/customer-tokens/${shop.customerToken}`, {
      token: shop.accessToken,
    });
    expect(response.status).toBe(200);
  });

  it("answers odd control inputs with 400 envelopes", async () => {
    for (const [method, path, body] of [
      ["POST", "/sandbox/merchants", "[1,2]"],
      ["POST", "/sandbox/customer-tokens", "{}"],
      ["POST", "/sandbox/customer-tokens", JSON.stringify({ merchantId: "x", fund: "1.00" })],
      ["POST", "/sandbox/customer-tokens", '{"merchantId":"nope"}'],
      ["POST", "/sandbox/faults", '{"kind":"meteor"}'],
      ["POST", "/sandbox/clock/advance", '{"ms":-5}'],
      ["POST", "/sandbox/webhooks", '{"merchantId":"x","urls":["ftp://x"]}'],
      ["POST", "/sandbox/settle", "{"],
    ] as const) {
      const response = await call(sandbox, method, path, {
        rawBody: body,
        headers: { "content-type": "application/json" },
      });
      expect([path, response.status >= 400 && response.status < 500]).toEqual([path, true]);
      errorReasons(response);
    }
  });
});
