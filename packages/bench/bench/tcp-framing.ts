import { createServer, type Server, type Socket } from "node:net";

// Finding each request's end on a bare TCP socket, for the stand-ins of row 5 that serve without
// node:http (the TCP floor, and the sandbox served on it): the blank line after the head, then
// Content-Length bytes. Not an HTTP parser: no chunked bodies, no limits, no checks of the head.

const HEADER_END = Buffer.from("\r\n\r\n", "latin1");
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/**
 * Calls `onRequest` with each request's head (request line and header lines, as a latin1 string:
 * one character per byte) and body (its bytes, a view of what was read), once both are whole, in
 * the order they came, however the bytes were cut.
 */
export function onEachRequest(socket: Socket, onRequest: (head: string, body: Buffer) => void): void {
  socket.setNoDelay(true);
  let pending: Buffer | undefined;
  socket.on("data", (chunk: Buffer) => {
    // Most reads hold whole requests: bytes are copied only when one was cut.
    const bytes = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
    let start = 0;
    for (;;) {
      const headerEnd = bytes.indexOf(HEADER_END, start);
      if (headerEnd < 0) break;
      const head = bytes.toString("latin1", start, headerEnd);
      const bodyStart = headerEnd + HEADER_END.length;
      const requestEnd = bodyStart + Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0);
      if (bytes.length < requestEnd) break;
      onRequest(head, bytes.subarray(bodyStart, requestEnd));
      start = requestEnd;
    }
    pending = start === bytes.length ? undefined : bytes.subarray(start);
  });
  socket.on("error", () => socket.destroy());
}

/** A TCP server handing each connection to `onSocket`; `endConnections` destroys the open ones (for a close). */
export function tcpServer(onSocket: (socket: Socket) => void): { server: Server; endConnections(): void } {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    onSocket(socket);
  });
  return {
    server,
    endConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
  };
}

/** node:http's Date header, formatted once per second as node does. */
let dateSecond = -1;
let dateText = "";
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/** The headers node:http adds after an answer's own on a keep-alive connection (Node 20's order). */
export function keepAliveHeaders(): string {
  return `Date: ${httpDate()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n`;
}
