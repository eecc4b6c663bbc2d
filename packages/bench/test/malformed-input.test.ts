import { connect } from "node:net";
import { Readable } from "node:stream";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it, type MockInstance, vi } from "vitest";
import { authorizationBody, CREATE_PATH } from "../bench/wire.js";
import { fetchAccessToken, type HttpMethod, openShop, type RawResponse, send } from "./support/sandbox.js";

// Malformed input, generated: the sandbox must answer every request with the JSON error envelope
// `{ id, error: { code, message, errors } }` (a 4xx, never a 500 or a dropped connection) and keep
// serving. The sandbox's own robustness test pins a few fixed cases; this one fuzzes with a fixed
// seed: random bytes, random JSON, random nesting depths and shapes, strings around the body limit,
// invalid UTF-8 at random places, random content types, methods and paths, and garbage HTTP.

const SEED = 777;
/** The sandbox's default limit: the configuration everyone runs. */
const BODY_LIMIT = 1024 * 1024;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let sandbox: SandboxServer;
let accessToken: string;
let customerToken: string;
let internalErrors: MockInstance<typeof console.error>;

beforeAll(async () => {
  sandbox = await startSandbox({ maxBodyBytes: BODY_LIMIT });
  const shop = openShop(sandbox);
  customerToken = shop.customerToken;
  accessToken = await fetchAccessToken(shop);
  // The sandbox reports a bug in a handler on stderr (and answers 500): none may happen.
  internalErrors = vi.spyOn(console, "error");
});
afterEach(async () => {
  expect(internalErrors).not.toHaveBeenCalled();
  await expectStillServing();
});
afterAll(async () => {
  internalErrors?.mockRestore();
  await sandbox?.close();
});

const bearer = () => ({ authorization: `Bearer ${accessToken}` });

function post(body: string | Buffer | Readable, contentType = "application/json"): Promise<RawResponse> {
  return send(sandbox, "POST", CREATE_PATH, {
    headers: { ...bearer(), "content-type": contentType },
    body: body as string | Buffer,
  });
}

/** The error envelope of specification 2.6, with a 4xx status. Returns the parsed body. */
function expectEnvelope(response: RawResponse, status?: number) {
  expect(response.status, response.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
  expect(response.status, response.text.slice(0, 200)).toBeLessThan(500);
  if (status !== undefined) expect(response.status, response.text.slice(0, 200)).toBe(status);
  const json = JSON.parse(response.text) as {
    id: unknown;
    error: { code: unknown; message: unknown; errors: unknown };
  };
  expect(json.id).toMatch(GUID);
  expect(json.error.code).toBe(response.status);
  expect(typeof json.error.message).toBe("string");
  expect(json.error.message).not.toBe("");
  expect(Array.isArray(json.error.errors)).toBe(true);
  expect((json.error.errors as unknown[]).length).toBeLessThanOrEqual(100);
  return json;
}

async function expectStillServing(): Promise<void> {
  const response = await post(JSON.stringify(authorizationBody(customerToken)));
  expect(response.status).toBe(200);
}

const validJson = () => JSON.stringify(authorizationBody(customerToken));

describe("malformed input: always an error envelope, and the sandbox keeps serving", () => {
  it("random bytes as the body", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096 }), async (bytes) => {
        expectEnvelope(await post(Buffer.from(bytes)), 400);
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it("random JSON documents, and valid bodies with random JSON at any depth", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (value) => {
        expectEnvelope(await post(JSON.stringify(value)), 400);
      }),
      { seed: SEED, numRuns: 150 },
    );
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.nat(), async (value, where) => {
        const body = authorizationBody(customerToken) as unknown as Record<string, Record<string, unknown>>;
        const slots = [body, body.order!, (body.order!.items as Array<Record<string, unknown>>)[0]!];
        const slot = slots[where % slots.length]!;
        const keys = Object.keys(slot);
        slot[keys[where % keys.length]!] = value;
        const response = await post(JSON.stringify(body));
        // A random value can happen to be valid where it landed (a string as a reference, say).
        if (response.status !== 200) expectEnvelope(response);
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it("deep nesting of random depth and shape, balanced or cut off, anywhere in the body", async () => {
    const nestingArb = fc.record({
      depth: fc.integer({ min: 1_000, max: 60_000 }),
      opener: fc.constantFrom("[", '{"a":', '[{"b":', '{"items":['),
      balanced: fc.boolean(),
      slot: fc.constantFrom("body", "customerToken", "order", "items", "unitPrice", "attemptSchedule"),
    });
    await fc.assert(
      fc.asyncProperty(nestingArb, async ({ depth, opener, balanced, slot }) => {
        const closer = [...opener]
          .reverse()
          .join("")
          .replace(/[[{]/g, (c) => (c === "[" ? "]" : "}"))
          .replace(/"[a-z]+":/g, "");
        const nested = `${opener.repeat(depth)}1${balanced ? closer.repeat(depth) : ""}`;
        const valid = validJson();
        const body =
          slot === "body"
            ? nested
            : slot === "unitPrice"
              ? valid.replace('"unitPrice":"24.90"', `"unitPrice":${nested}`)
              : slot === "items"
                ? valid.replace('"items":', `"items":${nested},"x":`)
                : valid.replace(`"${slot}":`, `"${slot}":${nested},"x":`);
        expectEnvelope(await post(body), body.length > BODY_LIMIT ? 413 : 400);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  it("huge strings within and beyond the body limit, with and without a Content-Length", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_000, max: 3 * BODY_LIMIT }), // beyond every field's limit (255 at most)
        fc.constantFrom("customerToken", "reference", "description", "id", "currency"),
        fc.boolean(),
        async (size, field, streamed) => {
          const body = authorizationBody(customerToken) as unknown as {
            customerToken: string;
            order: Record<string, unknown> & { items: Array<Record<string, unknown>> };
          };
          const huge = "x".repeat(size);
          if (field === "customerToken") body.customerToken = huge;
          else if (field === "reference" || field === "currency") body.order[field] = huge;
          else body.order.items[0]![field] = huge;
          const text = JSON.stringify(body);
          // Streamed: chunked transfer, no Content-Length, so the limit is found while reading.
          const payload = streamed ? Readable.from([Buffer.from(text)]) : text;
          const response = await post(payload);
          if (Buffer.byteLength(text) > BODY_LIMIT) expectEnvelope(response, 413);
          else if (field === "description")
            expect(response.status).toBe(200); // cut to 50, not rejected
          else expectEnvelope(response, 400);
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
  });

  it("invalid UTF-8 at random places of a valid body", async () => {
    const invalidSequences = [
      [0x80], // a continuation byte alone
      [0xbf, 0xbf],
      [0xc0, 0xaf], // overlong "/"
      [0xe0, 0x80, 0xaf], // overlong
      [0xed, 0xa0, 0x80], // an encoded surrogate
      [0xf4, 0x90, 0x80, 0x80], // beyond U+10FFFF
      [0xf5],
      [0xff],
      [0xe2, 0x82], // a sequence cut short
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...invalidSequences), fc.nat(), async (sequence, where) => {
        const valid = Buffer.from(validJson());
        const at = where % (valid.length + 1);
        const body = Buffer.concat([valid.subarray(0, at), Buffer.from(sequence), valid.subarray(at)]);
        expectEnvelope(await post(body), 400);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it("random content types: anything but application/json (with any parameters) is 415", async () => {
    const token = fc.string({
      unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789!#$&^_.+-"),
      minLength: 1,
      maxLength: 12,
    });
    const contentTypeArb = fc.oneof(
      fc.constantFrom(
        "text/plain",
        "application/xml",
        "application/jsonx",
        "application/json-patch+json",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "APPLICATION/JSON",
        "application/json; charset=latin1",
        " application/json ",
      ),
      fc
        .tuple(token, token, fc.option(token, { nil: undefined }))
        .map(
          ([type, subtype, parameter]) =>
            `${type}/${subtype}${parameter === undefined ? "" : `; ${parameter}=1`}`,
        ),
    );
    await fc.assert(
      fc.asyncProperty(contentTypeArb, async (contentType) => {
        const response = await post(validJson(), contentType);
        const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase();
        if (mediaType === "application/json") expect(response.status).toBe(200);
        else expectEnvelope(response, 415);
      }),
      { seed: SEED, numRuns: 100 },
    );
    const noContentType = await send(sandbox, "POST", CREATE_PATH, { headers: bearer(), body: validJson() });
    expectEnvelope(noContentType, 415);
  });

  it("random methods and paths, on made-up and on real routes", async () => {
    const segment = fc.oneof(
      fc.webSegment(),
      fc.constantFrom(
        "purchase",
        "authorizations",
        "customer-tokens",
        "manage",
        "orders",
        "capture",
        customerToken,
        "%00",
        "%ff",
        "..",
        "%2e%2e",
      ),
    );
    const madeUp = fc
      .array(segment, { minLength: 0, maxLength: 5 })
      .map((segments) => `/${segments.join("/")}`);
    // Real routes of the service with a random identifier (the token endpoint answers in OAuth's
    // own error format, by design, so it is not among them).
    const real = fc
      .tuple(
        fc.constantFrom(
          "/purchase/authorizations",
          "/purchase/customer-tokens/{}",
          "/manage/orders/{}",
          "/manage/orders/{}/capture",
          "/manage/orders/{}/cancel",
          "/manage/orders/{}/refund",
        ),
        fc.oneof(fc.webSegment(), fc.uuid(), fc.constant(customerToken)),
      )
      .map(([template, id]) => template.replace("{}", id));
    const methodArb = fc.constantFrom<HttpMethod>("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");
    await fc.assert(
      fc.asyncProperty(
        methodArb,
        fc.oneof(madeUp, real),
        fc.constantFrom("none", "{}", "[]", "x"),
        async (method, path, body) => {
          fc.pre(!path.startsWith("/sandbox")); // the control routes change state on purpose
          fc.pre(!(method === "DELETE" && path.includes(customerToken))); // would cancel the token the others use
          const response = await send(sandbox, method, path, {
            headers: { ...bearer(), ...(body === "none" ? {} : { "content-type": "application/json" }) },
            ...(body === "none" ? {} : { body }),
          });
          if (response.status < 300) {
            // Only a read of our own customer token can succeed.
            expect([method, path, response.status]).toEqual([
              "GET",
              `/purchase/customer-tokens/${customerToken}`,
              200,
            ]);
          } else expectEnvelope(response);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("garbage on the socket after a valid request line", async () => {
    const garbageArb = fc
      .uint8Array({ minLength: 1, maxLength: 300 })
      .filter((bytes) => !Buffer.from(bytes).includes("\r\n\r\n"));
    await fc.assert(
      fc.asyncProperty(garbageArb, async (garbage) => {
        const answer = await rawExchange(
          Buffer.concat([
            Buffer.from(`POST ${CREATE_PATH} HTTP/1.1\r\nHost: x\r\n`),
            Buffer.from(garbage),
            Buffer.from("\r\n\r\n"),
          ]),
        );
        const [head = "", body = ""] = answer.split("\r\n\r\n", 2);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
        expectEnvelope({ status, headers: {}, text: body });
      }),
      { seed: SEED, numRuns: 60 },
    );
  });
});

/** Writes raw bytes to a new connection and reads until the server closes it (or 5 s pass). */
function rawExchange(bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(sandbox.port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within 5 s to ${JSON.stringify(bytes.toString("latin1").slice(0, 120))}`));
    }, 5_000);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      // A parse error closes the connection; a request that parsed gets an answer on a kept-alive one.
      const text = Buffer.concat(chunks).toString("utf8");
      const [head, body] = text.split("\r\n\r\n", 2);
      const length = Number(/content-length: (\d+)/i.exec(head ?? "")?.[1]);
      if (body !== undefined && Buffer.byteLength(body) >= length) socket.end();
    });
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    socket.on("error", () => undefined); // a reset after the answer is fine; the answer is what counts
    socket.end(bytes);
  });
}
