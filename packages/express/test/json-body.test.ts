import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import express from "express";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonBodyReader } from "../src/http/json-body.js";

// The write routes' body reader against express.json(), which it must read exactly like: two routes
// of one real Express app on a real socket, one behind each, the same raw bytes sent to both, and
// what each handed on (the body, or the error's status and type) compared.

const LIMIT = 1_000;

interface ErrorSeen {
  status: unknown;
  type: unknown;
}

interface Seen {
  status: number;
  text: string;
}

let url: URL;
let close: () => Promise<void>;
/** The errors each route passed to next(err), by route. */
const errors: { fast: ErrorSeen[]; reference: ErrorSeen[]; [route: string]: ErrorSeen[] } = {
  fast: [],
  reference: [],
};
/** Requests the reader handed to express.json() instead of reading them itself. */
let handedOn = 0;

beforeAll(async () => {
  const app = express();
  const reference = express.json({ limit: LIMIT });
  const answer: express.RequestHandler = (req, res) => {
    res.json({ body: req.body === undefined ? "(undefined)" : req.body });
  };
  const countedReference: express.RequestHandler = (req, res, next) => {
    handedOn++;
    reference(req, res, next);
  };
  app.post("/fast", jsonBodyReader(LIMIT, countedReference), answer);
  app.post("/reference", reference, answer);
  // An app that parsed the body before the reader runs.
  app.post("/pre-parsed", express.json(), jsonBodyReader(LIMIT, reference), answer);
  app.use(((error, req, res, _next) => {
    const { status, type } = error as { status?: unknown; type?: unknown };
    errors[req.path.slice(1)]?.push({ status, type });
    res.status(typeof status === "number" ? status : 500).json({ error: { status, type } });
  }) as express.ErrorRequestHandler);
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  close = () => new Promise((resolve) => server.close(() => resolve()));
});
afterAll(() => close());

/**
 * Sends a raw HTTP/1.1 request (headers as given, `parts` written one by one, so a body can be
 * split anywhere, even inside a character) and returns the status and the body of the answer.
 */
function send(path: string, headers: Record<string, string>, parts: Buffer[]): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const head = [`POST ${path} HTTP/1.1`, `Host: ${url.host}`, "Connection: close"];
    for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
    const received: Buffer[] = [];
    socket.on("data", (chunk) => received.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const raw = Buffer.concat(received).toString("utf8");
      const [statusLine = "", ...rest] = raw.split("\r\n");
      const body = rest.join("\r\n").split("\r\n\r\n").slice(1).join("\r\n\r\n");
      resolve({ status: Number(statusLine.split(" ")[1]), text: body });
    });
    socket.write(`${head.join("\r\n")}\r\n\r\n`);
    const writeNext = (index: number) => {
      if (index === parts.length) return;
      socket.write(parts[index]!, () => setImmediate(() => writeNext(index + 1)));
    };
    writeNext(0);
  });
}

/** The same request to both routes; their answers. */
async function both(headers: Record<string, string>, parts: Buffer[]) {
  const [fast, reference] = [await send("/fast", headers, parts), await send("/reference", headers, parts)];
  return { fast, reference };
}

const JSON_TYPE = { "Content-Type": "application/json" };
const framed = (body: Buffer, headers: Record<string, string> = JSON_TYPE) => ({
  ...headers,
  "Content-Length": String(body.length),
});

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
    const before = handedOn;
    const { fast, reference } = await both(headers, parts);
    expect(fast).toEqual(reference);
    expect(handedOn - before).toBe(reader === "read" ? 0 : 1);
  });

  it("a body shorter than its Content-Length, then the connection closed: both refuse it the same way", async () => {
    errors.fast = [];
    errors.reference = [];
    const before = handedOn;
    const headers = { ...JSON_TYPE, "Content-Length": "100" };
    for (const path of ["/fast", "/reference"]) {
      const socket = connect(Number(url.port), url.hostname);
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\n`);
      for (const [name, value] of Object.entries(headers)) socket.write(`${name}: ${value}\r\n`);
      socket.write('\r\n{"cartId":');
      await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
    }
    await expect.poll(() => errors.fast.length + errors.reference.length).toBe(2);
    expect(errors.fast).toEqual(errors.reference);
    expect(errors.fast).toEqual([{ status: 400, type: "request.aborted" }]);
    expect(handedOn).toBe(before);
  });

  it("a body the app has parsed already is left as it is", async () => {
    const body = Buffer.from('{"cartId":"parsed"}');
    const seen = await send("/pre-parsed", framed(body), [body]);
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
          const before = handedOn;
          const { fast, reference } = await both(framed(body), parts.length === 0 ? [body] : parts);
          expect(fast).toEqual(reference);
          expect(handedOn).toBe(before);
        },
      ),
      { numRuns: 150 },
    );
  });
});
