import type { Dispatcher } from "undici";
import { describe, expect, it } from "vitest";
import {
  OutcomeUnknownError,
  outcomeOf,
  PurchaseAuthClient,
  type PurchaseAuthClientOptions,
} from "../src/index.js";
import { TOKEN, validRequest } from "./fixtures.js";

// Two calls with one key in one client: A's attempt is lost (unknown), B's is refused at connect
// (nothing sent by B). B's "not sent" would speak for B alone: while A runs, or after A ended
// unknown, the key may have charged, so B is unknown too, and the client does not forget A's key.
// Found by a review of the client's memory of keys (its first version forgot A's key here).

const KEY = "0f8fad5b-d9cb-469f-a165-70867728950e";

const AUTHORIZATION = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
const REQUEST_ID = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";

/**
 * Answers the token request; each create is lost ("hang"), accepted with a 202 after 20 ms
 * ("slow202") or refused at connect, in `plan` order.
 */
function scriptedDispatcher(plan: Array<"hang" | "slow202" | "refused">): Dispatcher {
  const handle = (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
    const controller: Record<string, unknown> = { aborted: false, paused: false, pause() {}, resume() {} };
    // How the client's attempt timeout ends a lost attempt: the dispatcher reports the abort.
    controller.abort = (reason: Error) =>
      setImmediate(() => handler.onResponseError?.(controller as never, reason));
    handler.onRequestStart?.(controller as never, {});
    if (String(options.path).includes("token")) {
      const token = { token_type: "Bearer", expires_in: 3600, access_token: "t" };
      setImmediate(() => {
        handler.onResponseStart?.(controller as never, 200, { "content-type": "application/json" }, "OK");
        handler.onResponseData?.(controller as never, Buffer.from(JSON.stringify(token)));
        handler.onResponseEnd?.(controller as never, {});
      });
      return true;
    }
    const step = plan.shift() ?? "refused";
    if (step === "hang") return true; // times out: it may have arrived
    if (step === "slow202") {
      const accepted = { id: REQUEST_ID, data: { authorizationId: AUTHORIZATION } };
      setTimeout(() => {
        handler.onResponseStart?.(controller as never, 202, { "content-type": "application/json" }, "");
        handler.onResponseData?.(controller as never, Buffer.from(JSON.stringify(accepted)));
        handler.onResponseEnd?.(controller as never, {});
      }, 20);
      return true;
    }
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    setImmediate(() => handler.onResponseError?.(controller as never, refused));
    return true;
  };
  return {
    dispatch: handle,
    close: async () => {},
    destroy: async () => {},
    on() {
      return this;
    },
  } as unknown as Dispatcher;
}

function clientOver(dispatcher: Dispatcher, retries: Partial<PurchaseAuthClientOptions> = {}) {
  return new PurchaseAuthClient({
    baseUrl: "http://service.invalid",
    clientId: "client",
    clientSecret: "secret",
    scope: "scope/.default",
    dispatcher,
    timeoutMs: 100,
    maxRetries: 0,
    ...retries,
  });
}

describe("concurrent calls with one key in one client", () => {
  it("a call that sent nothing while another with its key runs is unknown, not 'nothing happened'", async () => {
    const client = clientOver(scriptedDispatcher(["hang"]));
    const request = validRequest({ customerToken: TOKEN });
    const a = client.authorizations.create(request, { idempotencyKey: KEY }).catch((e: unknown) => e);
    const b = await client.authorizations.create(request, { idempotencyKey: KEY }).catch((e: unknown) => e);
    // B was refused at connect while A's attempt was out: A may charge under the key.
    expect([outcomeOf(b), (b as OutcomeUnknownError).retry]).toEqual(["unknown", "same-key"]);
    expect(OutcomeUnknownError.isInstance(await a)).toBe(true);
    await client.close();
  });

  it("a call that sent nothing while another with its key ran and succeeded is unknown, from that send", async () => {
    // B retries its refused connects past A's 202: A charged under the key and is done (forgotten);
    // B's "not sent, use a new key" would charge twice. Found by a review of the key memory.
    const client = clientOver(scriptedDispatcher(["slow202"]), {
      maxRetries: 6,
      retryBaseDelayMs: 10,
      retryMaxDelayMs: 10,
    });
    const request = validRequest({ customerToken: TOKEN });
    const a = client.authorizations.create(request, { idempotencyKey: KEY });
    const b = client.authorizations.create(request, { idempotencyKey: KEY }).catch((e: unknown) => e);
    const [accepted, refused] = await Promise.all([a, b]);
    expect(accepted.authorizationId).toBe(AUTHORIZATION);
    expect([outcomeOf(refused), (refused as OutcomeUnknownError).retry]).toEqual(["unknown", "same-key"]);
    // Its window counts from A's send, not from B's end.
    expect((refused as OutcomeUnknownError).firstSentAt.getTime()).toBeLessThanOrEqual(Date.now() - 20);
    await client.close();
  });

  it("a call beside one repeating a key sent before counts its window from that first send", async () => {
    // A repeats a write first sent a minute ago (its caller says so) and is lost again; B, beside it,
    // sends nothing. B's window starts at that first send, not at A's repeat. Found by a review.
    const client = clientOver(scriptedDispatcher(["hang"]));
    const request = validRequest({ customerToken: TOKEN });
    const firstSentAt = new Date(Date.now() - 60_000);
    const a = client.authorizations
      .create(request, { idempotencyKey: KEY, firstSentAt })
      .catch((e: unknown) => e);
    const b = await client.authorizations.create(request, { idempotencyKey: KEY }).catch((e: unknown) => e);
    expect(outcomeOf(b)).toBe("unknown");
    expect((b as OutcomeUnknownError).firstSentAt).toEqual(firstSentAt);
    expect(OutcomeUnknownError.isInstance(await a)).toBe(true);
    await client.close();
  });

  it("after one ended unknown, a later call with its key that sends nothing is unknown, from the first send", async () => {
    const client = clientOver(scriptedDispatcher(["hang"]));
    const request = validRequest({ customerToken: TOKEN });
    const first = await client.authorizations
      .create(request, { idempotencyKey: KEY })
      .catch((e: unknown) => e);
    expect(OutcomeUnknownError.isInstance(first)).toBe(true);
    const repeat = await client.authorizations
      .create(request, { idempotencyKey: KEY })
      .catch((e: unknown) => e);
    expect(outcomeOf(repeat)).toBe("unknown");
    expect((repeat as OutcomeUnknownError).firstSentAt).toEqual((first as OutcomeUnknownError).firstSentAt);
    await client.close();
  });

  it("a call that sent nothing, with no other call of its key, is not sent", async () => {
    const client = clientOver(scriptedDispatcher([]));
    const error = await client.authorizations
      .create(validRequest({ customerToken: TOKEN }), { idempotencyKey: KEY })
      .catch((e: unknown) => e);
    expect(outcomeOf(error)).toBe("not_sent");
    await client.close();
  });
});
