import { createServer, type Socket } from "node:net";
import { serveFloor } from "./child-rpc.js";
import { cannedAnswer } from "./wire.js";

// Child-process entry: the floor under node:http. A bare TCP server that finds each request's end
// (the blank line, then Content-Length bytes) and writes the bytes node:http writes for the create's
// answer (status line, the same headers, the body), in one write, and does nothing else. No header
// parsing beyond Content-Length, no limits, no chunked bodies: not an HTTP server, only what reading
// a request and writing an answer on a loopback socket costs. The CPU between it and the node:http
// floor is node:http's own.

const HEADER_END = "\r\n\r\n";
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

/** node:http's Date header, formatted once per second as node does. */
let dateSecond = -1;
let dateText = "";
function date(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

function answerBytes(path: string): string {
  const body = cannedAnswer(path);
  if (body === undefined) {
    return `HTTP/1.1 404 Not Found\r\nDate: ${date()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n`;
  }
  return (
    "HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\nDate: ${date()}\r\n` +
    `Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n${body}`
  );
}

function serve(socket: Socket): void {
  socket.setNoDelay(true);
  socket.setEncoding("latin1"); // one byte per character: offsets below are byte offsets
  let pending = "";
  socket.on("data", (chunk: string) => {
    pending += chunk;
    for (;;) {
      const headerEnd = pending.indexOf(HEADER_END);
      if (headerEnd < 0) return;
      const head = pending.slice(0, headerEnd);
      const requestEnd = headerEnd + HEADER_END.length + Number(CONTENT_LENGTH.exec(head)?.[1] ?? 0);
      if (pending.length < requestEnd) return;
      const pathStart = head.indexOf(" ") + 1;
      socket.write(answerBytes(head.slice(pathStart, head.indexOf(" ", pathStart))), "latin1");
      pending = pending.slice(requestEnd);
    }
  });
  socket.on("error", () => socket.destroy());
}

const sockets = new Set<Socket>();
const server = createServer((socket) => {
  sockets.add(socket);
  socket.once("close", () => sockets.delete(socket));
  serve(socket);
});
await serveFloor(server, () => {
  for (const socket of sockets) socket.destroy();
});
