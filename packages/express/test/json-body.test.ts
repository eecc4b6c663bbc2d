import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BodyReaderApp, framed, postRaw, startBodyReaderApp } from "./support/body-reader-app.js";

// The write routes' body reader against express.json(), which it must read exactly like: two routes
// of one real Express app on a real socket, one behind each, the same raw bytes sent to both, and
// what each handed on (the body, or the error's status and type) compared.

const LIMIT = 1_000;
const JSON_TYPE = { "Content-Type": "application/json" };

let app: BodyReaderApp;
beforeAll(async () => {
  app = await startBodyReaderApp(LIMIT);
});
afterAll(() => app.close());

/** The same request to both routes; their answers. */
async function both(headers: Record<string, string>, parts: Buffer[], paths = ["/fast", "/reference"]) {
  const fast = await postRaw(app.url, paths[0]!, headers, parts);
  const reference = await postRaw(app.url, paths[1]!, headers, parts);
  return { fast, reference };
}

describe("the write routes' JSON body reader reads as express.json() does", () => {
  /** Name, headers, the body's packets, and who reads it: the reader itself, or express.json(). */
  const cases: Array<[string, Record<string, string>, Buffer[], "read" | "handed on"]> = [];
  const plain = (
    name: string,
    text: string | Buffer,
    headers?: Record<string, string>,
    reader: "read" | "handed on" = "read",
  ) => {
    const body = typeof text === "string" ? Buffer.from(text) : text;
    cases.push([name, framed(body, headers), [body], reader]);
  };
  plain("an object", '{"cartId":"cart-1","captureMode":"Manual"}');
  plain("an empty body", "");
  plain("a byte order mark first", '\uFEFF{"cartId":"x"}');
  plain("white space first", ' \n\t{"a":[1,2,{"b":null}]}');
  plain("an array", "[1,2,3]");
  plain("a string at the top (strict)", '"cart-1"');
  plain("a number at the top (strict)", "42");
  plain("white space only", "   ");
  plain("broken JSON", '{"cartId":');
  plain("JSON with trailing garbage", '{"a":1}x');
  plain("a body over the limit", `{"cartId":"${"x".repeat(LIMIT)}"}`, JSON_TYPE, "handed on");
  plain("charset=utf-8 in upper case", '{"a":"é"}', { "Content-Type": "application/json; charset=UTF-8" });
  plain("charset=latin1", '{"a":1}', { "Content-Type": "application/json; charset=latin1" }, "handed on");
  plain("charset=utf-16", '{"a":1}', { "Content-Type": "application/json; charset=utf-16" }, "handed on");
  plain("no space before charset", '{"a":1}', { "Content-Type": "application/json;charset=utf-8" });
  // Parameters written any other way are for express.json() to judge (found by review).
  for (const [name, type] of [
    ["a space inside the charset value", "application/json; charset=utf -8"],
    ["a tab inside the charset value", "application/json; charset=utf\t-8"],
    ["a space inside the parameter name", "application/json; char set=utf-8"],
    ["a tab after the semicolon", "application/json;\tcharset=utf-8"],
  ] as const) {
    plain(
      `Content-Type with ${name}`,
      '{"cartId":"cart-1","amount":"1.00"}',
      { "Content-Type": type },
      "handed on",
    );
  }
  plain(
    "bytes that are not UTF-8",
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xc3, 0x22, 0x7d]),
  );
  const gzipped = gzipSync('{"cartId":"zipped"}');
  const nope = Buffer.from("nope");
  const empty = Buffer.from("{}");
  const one = Buffer.from('{"a":1}');
  cases.push(["a gzip body", { ...framed(gzipped), "Content-Encoding": "gzip" }, [gzipped], "handed on"]);
  cases.push(["garbage gzip", { ...framed(nope), "Content-Encoding": "gzip" }, [nope], "handed on"]);
  cases.push([
    "an unknown encoding",
    { ...framed(empty), "Content-Encoding": "zstd2" },
    [empty],
    "handed on",
  ]);
  cases.push(["identity encoding", { ...framed(one), "Content-Encoding": "Identity" }, [one], "read"]);
  const euro = Buffer.from('{"price":"9 €","name":"日本"}');
  const split = [euro.subarray(0, 12), euro.subarray(12, 20), euro.subarray(20)];
  cases.push(["a character split between packets", framed(euro), split, "read"]);
  cases.push([
    "a chunked body",
    { ...JSON_TYPE, "Transfer-Encoding": "chunked" },
    [Buffer.from('7\r\n{"a":1}\r\n0\r\n\r\n')],
    "handed on",
  ]);

  it.each(cases)("%s (%#)", async (_name, headers, parts, reader) => {
    const before = app.handedOn();
    const { fast, reference } = await both(headers, parts);
    expect(fast).toEqual(reference);
    expect(app.handedOn() - before).toBe(reader === "read" ? 0 : 1);
  });

  it("a body shorter than its Content-Length, then the connection closed: both refuse it the same way", async () => {
    app.errors.fast = [];
    app.errors.reference = [];
    const before = app.handedOn();
    const headers = { ...JSON_TYPE, "Content-Length": "100" };
    for (const path of ["/fast", "/reference"]) {
      const socket = connect(Number(app.url.port), app.url.hostname);
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${app.url.host}\r\n`);
      for (const [name, value] of Object.entries(headers)) socket.write(`${name}: ${value}\r\n`);
      socket.write('\r\n{"cartId":');
      await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
    }
    await expect.poll(() => (app.errors.fast?.length ?? 0) + (app.errors.reference?.length ?? 0)).toBe(2);
    expect(app.errors.fast).toEqual(app.errors.reference);
    expect(app.errors.fast).toEqual([{ status: 400, type: "request.aborted" }]);
    expect(app.handedOn()).toBe(before);
  });

  it("a request whose encoding an earlier middleware set is handed on: an error answer, no crash (found by review)", async () => {
    const body = Buffer.from('{"cartId":"cart-1"}');
    const parts = [body.subarray(0, 8), body.subarray(8)];
    const before = app.handedOn();
    const { fast, reference } = await both(framed(body), parts, ["/fast-text", "/reference-text"]);
    expect(reference.status).toBe(500);
    expect(JSON.parse(reference.text)).toEqual({ error: { status: 500, type: "stream.encoding.set" } });
    expect(fast).toEqual(reference);
    expect(app.handedOn() - before).toBe(1);
    expect(app.uncaught).toEqual([]);
  });

  it("a body the app has parsed already is left as it is", async () => {
    const body = Buffer.from('{"cartId":"parsed"}');
    const seen = await postRaw(app.url, "/pre-parsed", framed(body), [body]);
    expect(seen.status).toBe(200);
    expect(JSON.parse(seen.text)).toEqual({ body: { cartId: "parsed" } });
  });

  it("any JSON text, split anywhere, reads as express.json() reads it (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.json(),
          fc.string(),
          fc.jsonValue().map((value) => ` ${JSON.stringify(value)}\n`),
        ),
        fc.array(fc.nat(), { maxLength: 3 }),
        async (text, cuts) => {
          const body = Buffer.from(text);
          const points = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b);
          const parts: Buffer[] = [];
          let from = 0;
          for (const point of [...points, body.length]) {
            if (point > from) parts.push(body.subarray(from, point));
            from = Math.max(from, point);
          }
          const before = app.handedOn();
          const { fast, reference } = await both(framed(body), parts.length === 0 ? [body] : parts);
          expect(fast).toEqual(reference);
          expect(app.handedOn()).toBe(before);
        },
      ),
      { numRuns: 150 },
    );
  });
});
