import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { type SandboxOptions, type SandboxOutcome, Simulator } from "@purchase-auth/sandbox";
import { listenOnLoopback } from "./child-rpc.js";
import { keepAliveHeaders, onEachRequest, tcpServer } from "./tcp-framing.js";

// Row 5's diagnostic: the sandbox's own create served on the TCP floor's framing instead of
// node:http, with the same simulator and the same answers. It does about the least a transport of
// our own would do, so its CPU per create is likely the best replacing node:http could reach (README,
// row 5, lists what it leaves out). Not a server for anything else: the sandbox serves on node:http.

/** Repeated, these keep their first value in node:http (the rest are joined with ", "). */
const FIRST_WINS = new Set([
  "age",
  "authorization",
  "content-length",
  "content-type",
  "etag",
  "expires",
  "from",
  "host",
  "if-modified-since",
  "if-unmodified-since",
  "last-modified",
  "location",
  "max-forwards",
  "proxy-authorization",
  "referer",
  "retry-after",
  "server",
  "user-agent",
]);

export class TcpServedSandbox extends Simulator {
  readonly #tcp = tcpServer((socket) => this.#answerRequests(socket));
  #url = "";
  #closed: Promise<void> | undefined;

  /** Starts a simulator served on bare TCP on a free loopback port. */
  static async start(options: SandboxOptions): Promise<TcpServedSandbox> {
    const sandbox = new TcpServedSandbox(options);
    sandbox.#url = await listenOnLoopback(sandbox.#tcp.server);
    return sandbox;
  }

  get url(): string {
    return this.#url;
  }

  /** Stops the simulator and the server, dropping open connections. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.dispose();
      this.#tcp.endConnections();
      this.#tcp.server.close(() => resolve());
    });
    return this.#closed;
  }

  #answerRequests(socket: Socket): void {
    const { maxBodyBytes } = this.options;
    onEachRequest(socket, (head, body) => {
      const lines = head.split("\r\n");
      const [method = "GET", url = "/"] = lines[0]!.split(" ");
      const headers: Record<string, string> = {};
      for (let index = 1; index < lines.length; index++) {
        const line = lines[index]!;
        const colon = line.indexOf(":");
        if (colon < 0) continue; // node:http would refuse the request; no test sends one
        const name = line.slice(0, colon).toLowerCase();
        const value = headerValue(line, colon + 1);
        const earlier = headers[name];
        if (earlier === undefined) headers[name] = value;
        else if (!FIRST_WINS.has(name)) headers[name] = `${earlier}, ${value}`;
      }
      const tooLarge = body.length > maxBodyBytes;
      const outcome = this.serve({
        method,
        url,
        headers,
        body: tooLarge ? Buffer.alloc(0) : body,
        bodyTooLarge: tooLarge,
      });
      if (!(outcome instanceof Promise)) write(socket, outcome);
      else outcome.then((settled) => write(socket, settled)).catch(() => socket.destroy());
    });
  }
}

/** The header value from `start`, without the spaces and tabs around it (all node:http strips there). */
function headerValue(line: string, start: number): string {
  let from = start;
  let to = line.length;
  while (from < to && isBlank(line.charCodeAt(from))) from++;
  while (to > from && isBlank(line.charCodeAt(to - 1))) to--;
  return line.slice(from, to);
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

/** What node:http writes for the sandbox's answer (the node adapter's header order), in one write. */
function write(socket: Socket, outcome: SandboxOutcome): void {
  if (outcome.kind === "destroy") {
    socket.destroy();
    return;
  }
  const body = outcome.body ?? "";
  let head = `HTTP/1.1 ${outcome.status} ${STATUS_CODES[outcome.status]}\r\n`;
  const { headers } = outcome;
  if (headers !== undefined) {
    for (const name in headers) if (name !== "content-length") head += `${name}: ${headers[name]}\r\n`;
  }
  socket.write(`${head}content-length: ${Buffer.byteLength(body)}\r\n${keepAliveHeaders()}\r\n${body}`);
}
