import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigurationError, PurchaseAuthClient, type PurchaseAuthClientOptions } from "../src/index.js";

const valid: PurchaseAuthClientOptions = {
  baseUrl: "http://127.0.0.1:1",
  clientId: "client-1",
  clientSecret: "s3cr3t-value-that-must-not-leak",
  scope: "api://purchase/.default",
};

function optionError(options: unknown): ConfigurationError {
  try {
    new PurchaseAuthClient(options as PurchaseAuthClientOptions);
  } catch (error) {
    if (ConfigurationError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ConfigurationError");
}

describe("client options", () => {
  it.each([
    [{ ...valid, baseUrl: undefined }, "baseUrl", /baseUrl: is required/],
    [{ ...valid, baseUrl: "ftp://x" }, "baseUrl", /http/],
    [{ ...valid, authUrl: "not a url" }, "authUrl", /authUrl/],
    [{ ...valid, clientId: " " }, "clientId", /clientId must not be empty/],
    [{ ...valid, clientSecret: "" }, "clientSecret", /clientSecret must not be empty/],
    [{ ...valid, scope: "purchase" }, "scope", /<SCOPE_ID>\/\.default/],
    [{ ...valid, timeoutMs: -1 }, "timeoutMs", /timeoutMs/],
    [{ ...valid, timeoutMs: 60_000, deadlineMs: 1_000 }, "timeoutMs", /must not exceed deadlineMs/],
    [{ ...valid, maxRetries: 11 }, "maxRetries", /maxRetries/],
    [{ ...valid, dispatcher: {} }, "dispatcher", /undici Dispatcher/],
    [{ ...valid, paths: { capture: "/x" } }, "paths", /paths/],
  ])("names the option that is wrong (%#)", (options, option, message) => {
    const error = optionError(options);
    expect(error.option).toBe(option);
    expect(error.message).toMatch(message);
  });

  it("needs an options object", () => {
    expect(optionError(undefined).option).toBe("options");
  });

  it("accepts a minimal configuration", () => {
    expect(() => new PurchaseAuthClient(valid)).not.toThrow();
  });
});

describe("secret hygiene", () => {
  it("never shows the client secret through inspect, JSON or string conversion", () => {
    const client = new PurchaseAuthClient(valid);
    const views = [
      inspect(client, { depth: 10, showHidden: true }),
      JSON.stringify(client),
      String(client),
      JSON.stringify(client.authorizations),
      inspect(client.orders, { depth: 10, showHidden: true }),
    ];
    for (const view of views) expect(view).not.toContain(valid.clientSecret);
    expect(inspect(client)).toContain("client-1");
  });

  it("does not echo a rejected secret in a configuration error", () => {
    const error = optionError({ ...valid, scope: 42 });
    expect(`${error.message} ${JSON.stringify(error)} ${inspect(error)}`).not.toContain(valid.clientSecret);
  });
});

describe("close", () => {
  it("can be called more than once", async () => {
    const client = new PurchaseAuthClient(valid);
    await client.close();
    await expect(client.close()).resolves.toBeUndefined();
  });
});
