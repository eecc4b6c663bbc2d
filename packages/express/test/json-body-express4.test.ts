import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type BodyReaderApp, framed, postRaw, startBodyReaderApp } from "./support/body-reader-app.js";

// The write routes' body reader against Express 4's express.json() (body-parser 1): "express"
// resolves to version 4 for this file, as in express4.test.ts. Its parameters parse differently
// from Express 5's: a malformed one leaves the body unread ({}), and the reader must not read it
// (on a capture, {} means "the whole remainder"). Found by review.
vi.mock("express", async () => import("express4" as string));

let app: BodyReaderApp;
beforeAll(async () => {
  app = await startBodyReaderApp(1_000);
});
afterAll(() => app.close());

describe("the write routes' JSON body reader on Express 4 reads as its express.json() does", () => {
  it.each([
    ["no parameter", "application/json", "read"],
    ["charset=utf-8", "application/json; charset=utf-8", "read"],
    ["charset=UTF-8", "Application/JSON; charset=UTF-8", "read"],
    ["a space inside the charset value", "application/json; charset=utf -8", "handed on"],
    ["a tab inside the charset value", "application/json; charset=utf\t-8", "handed on"],
    ["a space inside the parameter name", "application/json; char set=utf-8", "handed on"],
    ["a tab after the semicolon", "application/json;\tcharset=utf-8", "handed on"],
  ])("Content-Type with %s", async (_name, type, reader) => {
    const body = Buffer.from('{"cartId":"cart-1","amount":"1.00"}');
    const headers = framed(body, { "Content-Type": type });
    const before = app.handedOn();
    const fast = await postRaw(app.url, "/fast", headers, [body]);
    const reference = await postRaw(app.url, "/reference", headers, [body]);
    expect(fast).toEqual(reference);
    expect(app.handedOn() - before).toBe(reader === "read" ? 0 : 1);
  });

  it("an empty body, a broken one and a string at the top read as they do there", async () => {
    for (const text of ["", '{"cartId":', '"cart-1"']) {
      const body = Buffer.from(text);
      const fast = await postRaw(app.url, "/fast", framed(body), [body]);
      const reference = await postRaw(app.url, "/reference", framed(body), [body]);
      expect(fast).toEqual(reference);
    }
  });
});
