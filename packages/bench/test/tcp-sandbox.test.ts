import { randomUUID } from "node:crypto";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shopOf } from "../bench/sandbox-host.js";
import { TcpServedSandbox } from "../bench/tcp-sandbox.js";
import { authorizationBody, CREATE_PATH, createHeaders, fetchAccessToken } from "../bench/wire.js";
import { exchange, normalised } from "./support/raw-exchange.js";

// Row 5 reads the create over bare TCP as the same create with node:http taken out. That holds only
// if the TCP-served sandbox reads the same requests and writes the same bytes as the sandbox over
// node:http: both are sent the same requests, in the same pieces, and must answer the same bytes
// (their Date headers, ids and access tokens aside).

const OPTIONS = { maxStoredObjects: 100, maxIdempotencyKeys: 100, maxBodyBytes: 4_096 };
let overNodeHttp: SandboxServer;
let overTcp: TcpServedSandbox;
const tokens = new Map<number, { accessToken: string; customerToken: string }>();

beforeAll(async () => {
  overNodeHttp = await startSandbox(OPTIONS);
  overTcp = await TcpServedSandbox.start(OPTIONS);
  for (const sandbox of [overNodeHttp, overTcp]) {
    const shop = shopOf(sandbox);
    tokens.set(portOf(sandbox.url), {
      accessToken: await fetchAccessToken(shop), // over each transport's own HTTP
      customerToken: shop.customerToken,
    });
  }
});

afterAll(async () => {
  await Promise.allSettled([overTcp?.close(), overNodeHttp?.close()]);
});

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** A create request's bytes for the sandbox at `port`, with `key` (a new one unless given). */
function create(
  port: number,
  options: { authorized?: boolean; key?: string; reference?: string; padding?: number } = {},
): string {
  const { accessToken, customerToken } = tokens.get(port)!;
  const headers = createHeaders(accessToken, options.key ?? randomUUID());
  if (options.authorized === false) delete headers.authorization;
  const request = authorizationBody(customerToken);
  if (options.reference !== undefined) request.order.reference = options.reference;
  // Whitespace after the JSON: a body of any size the same request.
  const body = JSON.stringify(request) + " ".repeat(options.padding ?? 0);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST ${CREATE_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines.join("")}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Both sandboxes sent the same requests (built per sandbox by `requests`), cut into `pieces`. */
async function both(
  requests: (port: number) => string,
  cut: (whole: string) => string[],
  answers: number,
  answersBeforeLast = 0,
) {
  const send = async (url: string) => {
    const port = portOf(url);
    const got = await exchange(port, cut(requests(port)), answers, answersBeforeLast);
    return { received: withoutToken(normalised(got.received)), beforeLastPiece: got.beforeLastPiece };
  };
  const [viaNodeHttp, viaTcp] = [await send(overNodeHttp.url), await send(overTcp.url)];
  return { nodeHttp: viaNodeHttp, tcp: viaTcp };
}

const withoutToken = (text: string) => text.replace(/"customerToken":"[^"]*"/g, '"customerToken":"<token>"');
const whole = (text: string) => [text];

describe("row 5's sandbox over bare TCP", () => {
  it("answers a create with the bytes the sandbox over node:http answers", async () => {
    const { nodeHttp, tcp } = await both((port) => create(port), whole, 1);
    expect(nodeHttp.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(nodeHttp.received).toContain('"authorizationId":"<id>"');
    expect(tcp.received).toBe(nodeHttp.received);
  });

  it("waits for the whole body, however it is cut", async () => {
    const cuts = [
      (text: string) => {
        const bodyStart = text.indexOf("\r\n\r\n") + 4;
        return [text.slice(0, bodyStart), text.slice(bodyStart, bodyStart + 7), text.slice(bodyStart + 7)];
      },
      (text: string) => {
        const blankLine = text.indexOf("\r\n\r\n");
        return [text.slice(0, blankLine + 2), text.slice(blankLine + 2)]; // inside the blank line
      },
    ];
    for (const cut of cuts) {
      const { nodeHttp, tcp } = await both((port) => create(port), cut, 1);
      expect([nodeHttp.beforeLastPiece, tcp.beforeLastPiece]).toEqual(["", ""]);
      expect(nodeHttp.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(tcp.received).toBe(nodeHttp.received);
    }
  });

  it("hands the simulator the body's bytes, a character cut between two reads included", async () => {
    const reference = `Bestellung-${randomUUID().slice(0, 8)}-é-€`;
    const inTwo = (text: string) => {
      const bytes = Buffer.from(text, "utf8");
      const euro = bytes.indexOf(Buffer.from("€", "utf8")); // three bytes: cut after the first
      return [bytes.subarray(0, euro + 1), bytes.subarray(euro + 1)];
    };
    const sent = async (url: string) => {
      const port = portOf(url);
      const got = await exchange(port, inTwo(create(port, { reference })), 1);
      return normalised(got.received);
    };
    expect(await sent(overTcp.url)).toBe(await sent(overNodeHttp.url));
    for (const sandbox of [overNodeHttp, overTcp]) {
      expect(sandbox.authorizations().filter((a) => a.reference === reference)).toHaveLength(1);
    }
  });

  it("answers a body over the limit as the sandbox over node:http does", async () => {
    const { nodeHttp, tcp } = await both((port) => create(port, { padding: OPTIONS.maxBodyBytes }), whole, 1);
    expect(nodeHttp.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(tcp.received).toBe(nodeHttp.received);
  });

  it("answers an answer that waits (a latency fault) once it is ready", async () => {
    for (const sandbox of [overNodeHttp, overTcp]) sandbox.injectFault({ kind: "latency", latencyMs: 30 });
    const { nodeHttp, tcp } = await both((port) => create(port), whole, 1);
    expect(nodeHttp.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(tcp.received).toBe(nodeHttp.received);
    for (const sandbox of [overNodeHttp, overTcp]) expect(sandbox.faults()).toEqual([]);
  });

  it("answers a request whose read also holds the start of the next, once the next is whole", async () => {
    const aReadAndAHalf = (text: string) => {
      const second = text.indexOf("POST ", 1);
      const middleOfSecond = second + Math.floor((text.length - second) / 2);
      return [text.slice(0, middleOfSecond), text.slice(middleOfSecond)];
    };
    // The last piece waits for the first answer: under CI's load it took more than the pause.
    const { nodeHttp, tcp } = await both((port) => create(port) + create(port), aReadAndAHalf, 2, 1);
    // The first answered at once, the second only when its second half came.
    expect(nodeHttp.beforeLastPiece.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    expect(tcp.beforeLastPiece.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    expect(nodeHttp.received.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(tcp.received).toBe(nodeHttp.received);
  });

  it("answers requests sent back to back one by one, in order: a new key, then the same key again", async () => {
    const key = randomUUID();
    const { nodeHttp, tcp } = await both(
      (port) => create(port, { key }) + create(port, { key }) + create(port, { authorized: false }),
      whole,
      3,
    );
    expect(nodeHttp.received.match(/HTTP\/1\.1 (\d+)/g)).toEqual([
      "HTTP/1.1 200",
      "HTTP/1.1 200",
      "HTTP/1.1 401",
    ]);
    expect(tcp.received).toBe(nodeHttp.received);
  });

  it("keeps what it serves in the simulator's records, a replay as a replay", async () => {
    const before = [overNodeHttp, overTcp].map((sandbox) => sandbox.stats().authorizations);
    const key = randomUUID();
    await both((port) => create(port, { key }) + create(port, { key }), whole, 2);
    const after = [overNodeHttp, overTcp].map((sandbox) => sandbox.stats().authorizations);
    expect(after.map((count, index) => count - before[index]!)).toEqual([1, 1]);
  });
});
