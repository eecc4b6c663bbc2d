import { describe, expect, it } from "vitest";
import { newGuid } from "../src/core/ids.js";
import { SeededRandom } from "../src/core/prng.js";
import { authorizedBody, authorizedResponse, successResponse } from "../src/http/envelopes.js";
import { awkwardText } from "./awkward-text.js";

// authorizedBody puts the answer of a synchronous create together without JSON.stringify when no id
// needs escaping. Its text must be JSON.stringify's for every input, the unusual ones included.

/** Mostly GUID characters, now and then one JSON.stringify escapes or keeps as it is. */
const randomText = (random: SeededRandom) =>
  awkwardText(random, "0123456789abcdefABCDEF-", { maxLength: 40, awkwardShare: 0.1 });

const stringified = (id: string, authorizationId: string, orderId: string) =>
  JSON.stringify({ id, data: { authorizationId, orderId } });

describe("authorizedBody", () => {
  it("is JSON.stringify's text for GUIDs", () => {
    for (let count = 0; count < 2_000; count++) {
      const [id, authorizationId, orderId] = [newGuid(), newGuid(), newGuid()];
      expect(authorizedBody(id, authorizationId, orderId)).toBe(stringified(id, authorizationId, orderId));
    }
  });

  it("is JSON.stringify's text for 20,000 generated ids, with quotes, backslashes, controls and surrogates (seed 2024)", () => {
    const random = new SeededRandom(2024);
    for (let count = 0; count < 20_000; count++) {
      const [id, authorizationId, orderId] = [randomText(random), randomText(random), randomText(random)];
      expect(authorizedBody(id, authorizationId, orderId)).toBe(stringified(id, authorizationId, orderId));
    }
  });

  it("makes the response successResponse makes, with a fresh GUID as its id", () => {
    const [authorizationId, orderId] = [newGuid(), newGuid()];
    const response = authorizedResponse(authorizationId, orderId);
    const { id } = JSON.parse(response.body ?? "") as { id: string };
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const expected = successResponse(200, { authorizationId, orderId });
    expect(response).toStrictEqual({ ...expected, body: stringified(id, authorizationId, orderId) });
    expect(Object.keys(response)).toEqual(Object.keys(expected));
  });
});
