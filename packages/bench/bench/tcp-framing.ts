import { createServer, type Server, type Socket } from "node:net";

// Finding each request's end on a bare TCP socket, for the stand-ins of row 5 that serve without
// node:http (the TCP floor, and the sandbox served on it): the blank line after the head, then
// Content-Length bytes. Not an HTTP parser: no chunked bodies, no limits, no checks of the head.

const HEADER_END = "\r\n\r\n";
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/**
 * Calls `onRequest` with each request's head (request line and header lines) and body, once both
 * are whole, in the order they came, however the bytes were cut. Both are latin1 strings, one
 * character per byte (`Buffer.from(body, "latin1")` gives the body's bytes back).
 */
export function onEachRequest(socket: Socket, onRequest: (head: string, body: string) => void): void {
  socket.setNoDelay(true);
  socket.setEncoding("latin1"); // one byte per character: offsets below are byte offsets
  let pending = "";
  socket.on("data", (chunk: string) => {
    pending += chunk;
    for (;;) {
      const headerEnd = pending.indexOf(HEADER_END);
      if (headerEnd < 0) return;
      const head = pending.slice(0, headerEnd);
      const bodyStart = headerEnd + HEADER_END.length;
      const requestEnd = bodyStart + Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0);
      if (pending.length < requestEnd) return;
      onRequest(head, pending.slice(bodyStart, requestEnd));
      pending = pending.slice(requestEnd);
    }
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
export function httpDate(): string {
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
