import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import type { Server, Socket } from "node:net";
import { keepAliveHeaders, onEachRequest, tcpServer } from "./tcp-framing.js";
import { cannedAnswer } from "./wire.js";

// The two floors under the sandbox's create call (row 5), each served by a child process of its own
// (floor-process.ts, tcp-floor-process.ts). Both answer what the sandbox answers a synchronous create
// (200, the same JSON envelope and headers, new ids each time) and do nothing else: no validation, no
// state. test/floors.test.ts checks that they write the same bytes.

/**
 * A bare node:http server that reads the request body and writes the answer. Its CPU per request is
 * what node:http itself costs; the sandbox cannot serve a create for less.
 *
 * `busyMicros` > 0: before answering, it computes for that long (a loop reading the clock, touching
 * no memory). Row 5 gives it the create's own work, measured without HTTP: the CPU it then costs per
 * request is what any node:http server doing that much per request costs at the same load.
 */
export function nodeHttpFloor(busyMicros = 0): HttpServer {
  return createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (busyMicros > 0) computeFor(busyMicros);
      const body = cannedAnswer(req.url ?? "");
      if (body === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, [
        "content-type",
        "application/json; charset=utf-8",
        "content-length",
        String(Buffer.byteLength(body)),
      ]);
      res.end(body);
    });
  });
}

/** Keeps the CPU busy for `micros` of wall time (the work a request of a busier server would do). */
function computeFor(micros: number): void {
  const end = performance.now() + micros / 1000;
  while (performance.now() < end) {
    // nothing: reading the clock is the work
  }
}

/**
 * The floor under node:http: a bare TCP server that finds each request's end (the blank line, then
 * Content-Length bytes) and writes the bytes node:http writes for its answer, in one write. No header
 * parsing beyond Content-Length, no limits, no chunked request bodies: not an HTTP server, only what
 * reading a request and writing an answer on a loopback socket costs. The CPU between it and the
 * node:http floor is node:http's own. `endConnections` destroys the open sockets (for a close).
 */
export function tcpFloor(): { server: Server; endConnections(): void } {
  return tcpServer(answerRequests);
}

function answerRequests(socket: Socket): void {
  onEachRequest(socket, (head) => {
    const pathStart = head.indexOf(" ") + 1;
    socket.write(answerBytes(head.slice(pathStart, head.indexOf(" ", pathStart))), "latin1");
  });
}

/** What node:http writes for the node:http floor's answer to `path` (Node 20's header order). */
function answerBytes(path: string): string {
  const keepAlive = keepAliveHeaders();
  const body = cannedAnswer(path);
  if (body === undefined) {
    return `HTTP/1.1 404 Not Found\r\n${keepAlive}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`;
  }
  return (
    "HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\n${keepAlive}\r\n${body}`
  );
}
