import { STATUS_CODES } from "node:http";
import type { Server, Socket } from "node:net";
import { type SandboxOptions, type SandboxOutcome, Simulator } from "@purchase-auth/sandbox";
import { keepAliveHeaders, onEachRequest, tcpServer } from "./tcp-framing.js";

// Row 5's diagnostic: the sandbox's own create served on the TCP floor's framing instead of
// node:http. It measures what a transport of our own could at best save, with the same simulator
// and the same answers: the minimum such a transport does (no chunked bodies, no limits on the head,
// answers in order only when each is ready at once, as every answer the bench asks for is). Not a
// server for anything else; the sandbox serves on node:http.

export class TcpServedSandbox extends Simulator {
  readonly #tcp = tcpServer((socket) => this.#answerRequests(socket));
  #url = "";

  /** Listens on a free loopback port. */
  async listen(): Promise<void> {
    const server = this.#tcp.server;
    server.listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    this.#url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  get url(): string {
    return this.#url;
  }

  get server(): Server {
    return this.#tcp.server;
  }

  async close(): Promise<void> {
    this.dispose();
    this.#tcp.endConnections();
    await new Promise<void>((resolve) => this.#tcp.server.close(() => resolve()));
  }

  #answerRequests(socket: Socket): void {
    const { maxBodyBytes } = this.options;
    onEachRequest(socket, (head, bodyText) => {
      const lines = head.split("\r\n");
      const [method = "GET", url = "/"] = lines[0]!.split(" ");
      const headers: Record<string, string> = {};
      for (let index = 1; index < lines.length; index++) {
        const line = lines[index]!;
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).toLowerCase();
        const value = line.slice(colon + 1).trim();
        // As node:http joins a repeated header (the few it keeps first or as a list aside).
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      const tooLarge = bodyText.length > maxBodyBytes;
      const outcome = this.serve({
        method,
        url,
        headers,
        body: tooLarge ? Buffer.alloc(0) : Buffer.from(bodyText, "latin1"),
        bodyTooLarge: tooLarge,
      });
      if (outcome instanceof Promise) void outcome.then((settled) => write(socket, settled));
      else write(socket, outcome);
    });
  }
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

export async function startTcpServedSandbox(options: SandboxOptions): Promise<TcpServedSandbox> {
  const sandbox = new TcpServedSandbox(options);
  await sandbox.listen();
  return sandbox;
}
