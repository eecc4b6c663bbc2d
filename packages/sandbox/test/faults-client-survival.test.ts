import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SandboxServer, startSandbox } from "../src/index.js";
import {
  authorize,
  call,
  errorReasons,
  openShop,
  requestToken,
  type Shop,
  startReceiver,
  type WebhookReceiver,
} from "./helpers.js";

// The faults a client must survive (issue 11): gateway answers before and after the commit, 429 with
// Retry-After, a committed 2xx whose body is empty or unreadable, an answer that arrives after the
// webhook. Raw HTTP: what any client sees.

let sandbox: SandboxServer;
let shop: Shop;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(() => sandbox.close());
beforeEach(async () => {
  sandbox.reset();
  shop = await openShop(sandbox);
});

const keyHeader = (key: string) => ({ "Service-Idempotency-Key": key });
const injectOverHttp = (spec: unknown) => call(sandbox, "POST", "/sandbox/faults", { body: spec });

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe("gateway_error", () => {
  it.each([500, 502, 504] as const)(
    "before_commit %d: a gateway's HTML page, nothing processed, nothing stored",
    async (status) => {
      const injected = await injectOverHttp({ kind: "gateway_error", status, phase: "before_commit" });
      expect(injected.status).toBe(200);
      const key = randomUUID();
      const response = await authorize(sandbox, shop, {}, keyHeader(key));
      expect(response.status).toBe(status);
      expect(response.headers["content-type"]).toBe("text/html");
      expect(response.text).toContain(`<title>${status} `);
      expect(isJson(response.text)).toBe(false);
      expect(sandbox.authorizations()).toEqual([]);
      // The key was never taken: the retry runs for real.
      const retry = await authorize(sandbox, shop, {}, keyHeader(key));
      expect(retry.status).toBe(202);
      expect(sandbox.authorizations()).toHaveLength(1);
    },
  );

  it.each([500, 502, 504] as const)(
    "after_commit %d: processed and stored; the retry with the key replays the 202",
    async (status) => {
      sandbox.injectFault({ kind: "gateway_error", status, phase: "after_commit" });
      const key = randomUUID();
      const response = await authorize(sandbox, shop, {}, keyHeader(key));
      expect([response.status, isJson(response.text)]).toEqual([status, false]);
      const [authorization] = sandbox.authorizations();
      expect(authorization?.idempotencyKey).toBe(key);
      const retry = await authorize(sandbox, shop, {}, keyHeader(key));
      expect(retry.status).toBe(202);
      expect(retry.json.data.authorizationId).toBe(authorization?.authorizationId);
      expect(sandbox.authorizations()).toHaveLength(1);
      await sandbox.settle();
      expect(sandbox.events().map(({ event }) => event.type)).toContain("authorization.succeeded");
    },
  );

  it("after_commit on an order write: the capture happened", async () => {
    const manual = await openShop(sandbox, { captureMode: "Manual" });
    const created = await authorize(sandbox, manual, { attemptSchedule: { preferSynchronous: true } });
    const { orderId } = created.json.data;
    sandbox.injectFault({
      kind: "gateway_error",
      status: 504,
      phase: "after_commit",
      match: { path: "/manage/" },
    });
    const capture = await call(sandbox, "POST", `/manage/orders/${orderId}/capture`, {
      token: manual.accessToken,
      headers: keyHeader(randomUUID()),
    });
    expect(capture.status).toBe(504);
    expect(sandbox.orders()[0]?.status).toBe("Activated");
  });
});

describe("rate_limited", () => {
  it("429 with Retry-After (default 1 s), nothing processed", async () => {
    sandbox.injectFault({ kind: "rate_limited" });
    await injectOverHttp({ kind: "rate_limited", retryAfterSeconds: 7 });
    const first = await authorize(sandbox, shop);
    const second = await authorize(sandbox, shop);
    expect([first.status, first.headers["retry-after"], errorReasons(first)]).toEqual([429, "1", []]);
    expect([second.status, second.headers["retry-after"]]).toEqual([429, "7"]);
    expect(sandbox.authorizations()).toEqual([]);
    expect((await authorize(sandbox, shop)).status).toBe(202);
  });

  it("on the token endpoint: 429 in the OAuth error shape", async () => {
    sandbox.injectFault({ kind: "rate_limited", retryAfterSeconds: 3, match: { path: "/oauth2/" } });
    const form = {
      grant_type: "client_credentials",
      client_id: shop.merchant.clientId,
      client_secret: shop.merchant.clientSecret,
      scope: shop.merchant.scope,
    };
    const limited = await requestToken(sandbox, form);
    expect([limited.status, limited.headers["retry-after"], limited.json.error]).toEqual([
      429,
      "3",
      "temporarily_unavailable",
    ]);
    expect((await requestToken(sandbox, form)).status).toBe(200);
  });
});

describe("garbled_success", () => {
  it("empty: the real 2xx status with an empty body; the authorization exists and the key replays it", async () => {
    sandbox.injectFault({ kind: "garbled_success", body: "empty" });
    const key = randomUUID();
    const response = await authorize(sandbox, shop, {}, keyHeader(key));
    expect([response.status, response.text]).toEqual([202, ""]);
    const retry = await authorize(sandbox, shop, {}, keyHeader(key));
    expect(retry.json.data.authorizationId).toBe(sandbox.authorizations()[0]?.authorizationId);
    expect(sandbox.authorizations()).toHaveLength(1);
  });

  it("garbled: the real 200 with a body that is not JSON; fires on a 2xx only", async () => {
    sandbox.injectFault({ kind: "garbled_success", body: "garbled" });
    const refused = await authorize(sandbox, shop, { order: { currency: "SEK" } });
    expect(refused.status).toBe(422); // not a success: the fault stays armed
    expect(errorReasons(refused)).toEqual(["INVALID_CURRENCY"]);
    const response = await authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } });
    expect(response.status).toBe(200);
    expect(response.text).not.toBe("");
    expect(isJson(response.text)).toBe(false);
    expect(sandbox.orders()).toHaveLength(1);
    expect(sandbox.faults()).toEqual([]);
  });
});

describe("delay_after_commit", () => {
  let receiver: WebhookReceiver;
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(() => receiver.close());

  it("the webhook arrives before the answer of the POST that caused it", async () => {
    sandbox.setWebhooks({ merchantId: shop.merchant.merchantId, urls: [receiver.url] });
    sandbox.injectFault({ kind: "delay_after_commit", latencyMs: 4_000 });
    let answered = false;
    const pending = authorize(sandbox, shop, { attemptSchedule: { preferSynchronous: true } }).then(
      (response) => {
        answered = true;
        return response;
      },
    );
    while (receiver.received.length === 0 && !answered)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    expect(receiver.received[0]?.event.type).toBe("authorization.succeeded");
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.json.data.orderId).toBe(receiver.received[0]?.event.data.orderId);
  });
});

describe("fault input", () => {
  it.each([
    [{ kind: "gateway_error", phase: "before_commit" }, "status"],
    [{ kind: "gateway_error", status: 503, phase: "before_commit" }, "status"],
    [{ kind: "gateway_error", status: 502 }, "phase"],
    [{ kind: "gateway_error", status: 502, phase: "during" }, "phase"],
    [{ kind: "latency", status: 502 }, "status"],
    [{ kind: "rate_limited", retryAfterSeconds: -1 }, "retryAfterSeconds"],
    [{ kind: "rate_limited", retryAfterSeconds: 1.5 }, "retryAfterSeconds"],
    [{ kind: "rate_limited", retryAfterSeconds: 86_401 }, "retryAfterSeconds"],
    [{ kind: "garbled_success" }, "body"],
    [{ kind: "garbled_success", body: "noise" }, "body"],
    [{ kind: "delay_after_commit" }, "latencyMs"],
    [{ kind: "delay_after_commit", latencyMs: 1e9 }, "latencyMs"],
    [{ kind: "latency", latencyMs: -1 }, "latencyMs"],
    [{ kind: "unavailable", count: 0 }, "count"],
    [{ kind: "unavailable", count: 1e12 }, "count"],
    [{ kind: "unavailable", probability: 1.5 }, "probability"],
    [{ kind: "unavailable", match: { method: "PO ST" } }, "match.method"],
    [{ kind: "unavailable", match: { path: "/x".repeat(2000) } }, "match.path"],
    [{ kind: "unavailable", match: { verb: "GET" } }, "match.verb"],
  ])("%j is a 400 naming %s", async (spec, field) => {
    const response = await injectOverHttp(spec);
    expect(response.status).toBe(400);
    expect(response.json.error.errors).toEqual([
      expect.objectContaining({ reason: "INVALID_REQUEST", field }),
    ]);
    expect(response.json.error.errors[0].message).toContain(field);
    expect(sandbox.faults()).toEqual([]);
  });

  it("lists the kind-specific fields", async () => {
    await injectOverHttp({ kind: "gateway_error", status: 502, phase: "after_commit" });
    await injectOverHttp({ kind: "rate_limited" });
    await injectOverHttp({ kind: "garbled_success", body: "empty" });
    await injectOverHttp({ kind: "delay_after_commit", latencyMs: 250 });
    const listed = await call(sandbox, "GET", "/sandbox/faults");
    expect(listed.json).toEqual([
      expect.objectContaining({ kind: "gateway_error", status: 502, phase: "after_commit" }),
      expect.objectContaining({ kind: "rate_limited", retryAfterSeconds: 1 }),
      expect.objectContaining({ kind: "garbled_success", body: "empty" }),
      expect.objectContaining({ kind: "delay_after_commit", latencyMs: 250 }),
    ]);
  });
});
