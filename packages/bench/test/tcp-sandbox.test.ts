import { randomUUID } from "node:crypto";
import { type SandboxServer, startSandbox } from "@purchase-auth/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shopOf } from "../bench/sandbox-host.js";
import { startTcpServedSandbox, type TcpServedSandbox } from "../bench/tcp-sandbox.js";
import { authorizationBody, CREATE_PATH, createHeaders, fetchAccessToken } from "../bench/wire.js";
import { exchange, normalised } from "./support/raw-exchange.js";

// Row 5 reads the create over bare TCP as the same create with node:http taken out. That holds only
// if the TCP-served sandbox reads the same requests and writes the same bytes as the sandbox over
// node:http: both are sent the same requests, in the same pieces, and must answer the same bytes
// (their Date headers, ids and access tokens aside).

let overNodeHttp: SandboxServer;
let overTcp: TcpServedSandbox;
const tokens = new Map<number, { accessToken: string; customerToken: string }>();

beforeAll(async () => {
  overNodeHttp = await startSandbox({ maxStoredObjects: 100, maxIdempotencyKeys: 100 });
  overTcp = await startTcpServedSandbox({ maxStoredObjects: 100, maxIdempotencyKeys: 100 });
  for (const sandbox of [overNodeHttp, overTcp]) {
    const shop = shopOf(sandbox);
    tokens.set(portOf(sandbox.url), {
      accessToken: await fetchAccessToken(shop), // over each transport's own HTTP
      customerToken: shop.customerToken,
    });
  }
});

afterAll(async () => {
  await overTcp?.close();
  await overNodeHttp?.close();
});

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** A create request's bytes for the sandbox at `port`, with `key` (a new one unless given). */
function create(port: number, options: { authorized?: boolean; key?: string } = {}): string {
  const { accessToken, customerToken } = tokens.get(port)!;
  const headers = createHeaders(accessToken, options.key ?? randomUUID());
  if (options.authorized === false) delete headers.authorization;
  const body = JSON.stringify(authorizationBody(customerToken));
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST ${CREATE_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines.join("")}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Both sandboxes sent the same requests (built per sandbox by `requests`), cut into `pieces`. */
async function both(requests: (port: number) => string, cut: (whole: string) => string[], answers: number) {
  const send = async (url: string) => {
    const port = portOf(url);
    const got = await exchange(port, cut(requests(port)), answers);
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
    const inThree = (text: string) => {
      const bodyStart = text.indexOf("\r\n\r\n") + 4;
      return [
        text.slice(0, bodyStart - 2),
        text.slice(bodyStart - 2, bodyStart + 7),
        text.slice(bodyStart + 7),
      ];
    };
    const { nodeHttp, tcp } = await both((port) => create(port), inThree, 1);
    expect([nodeHttp.beforeLastPiece, tcp.beforeLastPiece]).toEqual(["", ""]);
    expect(nodeHttp.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
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

  it("keeps what it served in the same simulator's records", () => {
    // Every create above went to each sandbox's own stores: three creates, one of them a replay.
    expect(overTcp.stats().authorizations).toBe(overNodeHttp.stats().authorizations);
    expect(overTcp.stats().authorizations).toBe(3);
  });
});
