import { afterEach, describe, expect, it, vi } from "vitest";
import type { HttpResponse } from "../src/http/transport.js";
import { bodyMatches, parseSuccessBody } from "../src/resources/request-options.js";
import { createAuthorizationResponseSchema } from "../src/schemas/envelopes.js";

// The executor asks `accepts` whether a 2xx body is usable, then the resource reads it: one answer
// is parsed and checked once, and reads the same either way.

const body = JSON.stringify({
  id: "7d1f6c1e-2b4a-4c8e-9f3a-1a2b3c4d5e6f",
  data: {
    authorizationId: "0b9a8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d",
    orderId: "5e4d3c2b-1a09-4f8e-b7d6-c5b4a3928170",
  },
});

function answer(text: string): HttpResponse {
  return { status: 200, headers: {}, body: text };
}

afterEach(() => vi.restoreAllMocks());

describe("a 2xx body checked by bodyMatches, then read by parseSuccessBody", () => {
  it("is parsed once", () => {
    const response = answer(body);
    const parse = vi.spyOn(JSON, "parse");
    expect(bodyMatches(createAuthorizationResponseSchema)(response)).toBe(true);
    const read = parseSuccessBody(createAuthorizationResponseSchema, response, { operation: "Create" });
    expect(parse).toHaveBeenCalledTimes(1);
    expect(read).toEqual(createAuthorizationResponseSchema.parse(JSON.parse(body)));
  });

  it("reads as it did without the check before it", () => {
    const checkedFirst = answer(body);
    bodyMatches(createAuthorizationResponseSchema)(checkedFirst);
    const context = { operation: "Create" };
    expect(parseSuccessBody(createAuthorizationResponseSchema, checkedFirst, context)).toEqual(
      parseSuccessBody(createAuthorizationResponseSchema, answer(body), context),
    );
  });

  it("a body that does not match is refused by both", () => {
    for (const text of ["", "not json", '{"id":"x"}']) {
      const response = answer(text);
      expect(bodyMatches(createAuthorizationResponseSchema)(response)).toBe(false);
      expect(() =>
        parseSuccessBody(createAuthorizationResponseSchema, response, { operation: "Create" }),
      ).toThrow(/does not understand/);
    }
  });
});
