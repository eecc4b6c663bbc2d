import type { AddressInfo, Server } from "node:net";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeHttpFloor, tcpFloor } from "../bench/floor-servers.js";
import { CREATE_PATH } from "../bench/wire.js";
import { completeAnswers, exchange, normalised } from "./support/raw-exchange.js";

// Row 5's account subtracts the TCP floor from the node:http floor and calls the difference
// node:http's own cost. That holds only if both read the same requests and write the same bytes: a
// TCP floor that answered before the body had arrived, or wrote less, would make node:http look
// costlier than it is. Both floors are sent the same bytes, in the same pieces, and must answer the
// same bytes (their Date header and fresh ids aside).

const body = JSON.stringify({ customerToken: "token", order: { description: "Kaffee, gerÃ¶stet é" } });
const request = (path: string) =>
  `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
  `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

const servers: Array<{ server: Server; end(): void }> = [];
let nodeHttpPort = 0;
let busyPort = 0;
let tcpPort = 0;
/** The busy floor's computation per request: long enough that no answer can come sooner by chance. */
const BUSY_MICROS = 150_000;

async function listen(server: Server, end: () => void): Promise<number> {
  servers.push({ server, end });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  const http = nodeHttpFloor();
  nodeHttpPort = await listen(http, () => http.closeAllConnections());
  const busy = nodeHttpFloor(BUSY_MICROS);
  busyPort = await listen(busy, () => busy.closeAllConnections());
  const tcp = tcpFloor();
  tcpPort = await listen(tcp.server, tcp.endConnections);
});

afterAll(async () => {
  for (const { server, end } of servers) {
    end();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function bothFloors(pieces: readonly string[], answers: number) {
  const [viaNodeHttp, viaTcp] = await Promise.all([
    exchange(nodeHttpPort, pieces, answers),
    exchange(tcpPort, pieces, answers),
  ]);
  return {
    nodeHttp: normalised(viaNodeHttp.received),
    tcp: normalised(viaTcp.received),
    beforeLastPiece: [viaNodeHttp.beforeLastPiece, viaTcp.beforeLastPiece],
  };
}

describe("row 5's two floors", () => {
  it("answer a create with the same bytes", async () => {
    const { nodeHttp, tcp } = await bothFloors([request(CREATE_PATH)], 1);
    expect(nodeHttp).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(nodeHttp).toContain('"authorizationId":"<id>"');
    expect(tcp).toBe(nodeHttp);
  });

  it("wait for the whole body, however it is cut", async () => {
    const whole = request(CREATE_PATH);
    const blankLine = whole.indexOf("\r\n\r\n");
    const cuts = [
      [
        whole.slice(0, blankLine + 4),
        whole.slice(blankLine + 4, blankLine + 10),
        whole.slice(blankLine + 10),
      ],
      [whole.slice(0, blankLine + 2), whole.slice(blankLine + 2)], // inside the blank line
    ];
    for (const pieces of cuts) {
      const { nodeHttp, tcp, beforeLastPiece } = await bothFloors(pieces, 1);
      expect(beforeLastPiece).toEqual(["", ""]); // nothing answered before the body was whole
      expect(nodeHttp).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(tcp).toBe(nodeHttp);
    }
  });

  it("answer requests sent back to back one by one, in order", async () => {
    const { nodeHttp, tcp } = await bothFloors([request(CREATE_PATH) + request(CREATE_PATH)], 2);
    expect(nodeHttp.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(tcp).toBe(nodeHttp);
  });

  it("answer a path they do not serve with the same 404", async () => {
    const { nodeHttp, tcp } = await bothFloors([request("/nowhere")], 1);
    expect(nodeHttp).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(tcp).toBe(nodeHttp);
  });
});

describe("row 5's busy floor", () => {
  it("answers what the plain node:http floor answers", async () => {
    const busy = await exchange(busyPort, [request(CREATE_PATH)], 1);
    const plain = await exchange(nodeHttpPort, [request(CREATE_PATH)], 1);
    expect(normalised(busy.received)).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(normalised(busy.received)).toBe(normalised(plain.received));
  });

  it("computes as long as it was told before each answer, on every request of a connection", async () => {
    const waits = await answerWaits(busyPort, 3);
    // Lower bounds only: a slow machine makes a wait longer, never shorter.
    for (const micros of waits) expect(micros).toBeGreaterThanOrEqual(BUSY_MICROS);
  });
});

/** Sends `count` creates on one connection, each once the last was answered: µs until each answer began. */
function answerWaits(port: number, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const waits: number[] = [];
    let sentAt = 0;
    let received = "";
    const send = () => {
      received = "";
      sentAt = performance.now();
      socket.write(request(CREATE_PATH));
    };
    socket.setEncoding("latin1");
    socket.on("error", reject);
    socket.on("connect", send);
    socket.on("data", (chunk: string) => {
      if (received === "") waits.push((performance.now() - sentAt) * 1000);
      received += chunk;
      if (completeAnswers(received) < 1) return;
      if (waits.length < count) return send();
      socket.destroy();
      resolve(waits);
    });
  });
}
