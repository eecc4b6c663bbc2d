import { inspect } from "node:util";
import { MockAgent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { secretFreeCause } from "../src/http/secret-free-cause.js";
import { PurchaseAuthClient } from "../src/index.js";
import { TOKEN, validRequest } from "./fixtures.js";

// Errors never show a secret, also through their causes: undici's MockAgent, which applications'
// tests use as the dispatcher, quotes the request it could not match in its error's message (the
// token request's form with the client secret; the headers with the bearer token).

const ORIGIN = "https://service.example";
const CLIENT_SECRET = "s3cret+with/chars=";
const BEARER = "bearer-value-1234567890";

let mock: MockAgent | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

function clientOver(agent: MockAgent) {
  return new PurchaseAuthClient({
    baseUrl: ORIGIN,
    clientId: "client-1",
    clientSecret: CLIENT_SECRET,
    scope: "scope/.default",
    dispatcher: agent,
    maxRetries: 0,
  });
}

/** Everything an error shows: its message, JSON and `util.inspect` with its causes. */
function shown(error: unknown): string {
  return `${(error as Error).message} ${JSON.stringify(error)} ${inspect(error, { depth: 10, showHidden: true })}`;
}

describe("an error whose cause is a dispatcher's error that quotes the request", () => {
  it("the token request's form: no client secret, raw or form-encoded", async () => {
    mock = new MockAgent();
    mock.disableNetConnect();
    // A body matcher that never matches: MockAgent's error quotes the form it was given.
    mock
      .get(ORIGIN)
      .intercept({ path: /token/, method: "POST", body: () => false })
      .reply(200, {});
    const error = await clientOver(mock)
      .authorizations.create(validRequest({ customerToken: TOKEN }))
      .catch((caught: unknown) => caught);
    expect(shown(error)).toContain("[redacted]"); // the cause is there, cut
    expect(shown(error)).not.toContain(CLIENT_SECRET);
    expect(shown(error)).not.toContain(encodeURIComponent(CLIENT_SECRET));
  });

  it("the service request's headers: no bearer token", async () => {
    mock = new MockAgent();
    mock.disableNetConnect();
    const pool = mock.get(ORIGIN);
    pool
      .intercept({ path: /token/, method: "POST" })
      .reply(200, { token_type: "Bearer", expires_in: 3600, access_token: BEARER });
    pool
      .intercept({ path: "/purchase/authorizations", method: "POST", headers: { "x-never": "1" } })
      .reply(202, {});
    const error = await clientOver(mock)
      .authorizations.create(validRequest({ customerToken: TOKEN }))
      .catch((caught: unknown) => caught);
    expect(shown(error)).toContain("[redacted]");
    expect(shown(error)).not.toContain(BEARER);
  });
});

describe("secretFreeCause", () => {
  it("keeps an error that quotes no secret as it is, and a cut one's name and code", () => {
    const socket = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    expect(secretFreeCause(socket, ["abc"])).toBe(socket);
    const quoting = Object.assign(new TypeError("no match for abc"), { code: "UND_MOCK_ERR" });
    const cut = secretFreeCause(quoting, ["abc", undefined, ""]) as Error & { code?: string };
    expect([cut.name, cut.code, cut.message]).toEqual([
      "TypeError",
      "UND_MOCK_ERR",
      "no match for [redacted]",
    ]);
    expect(cut.stack).not.toContain("abc");
  });
});
