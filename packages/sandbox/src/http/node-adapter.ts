import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { ResolvedSandboxOptions } from "../options.js";
import { errorResponse } from "./envelopes.js";
import type { SandboxOutcome, SandboxRequest } from "./types.js";

type ReadBody = { body: Buffer; tooLarge: boolean };

const EMPTY = Buffer.alloc(0);
const TOO_LARGE: ReadBody = Object.freeze({ body: EMPTY, tooLarge: true });
const ignore = () => undefined;

/**
 * Reads at most `maxBytes` of the body, then calls `done` once. Past the limit it stops collecting and
 * answers at once; node discards the rest of the upload after the response, so the connection stays
 * usable. A client that goes away before the end is never answered: `done` is not called, and no
 * 'close' or 'error' listener is needed for that. Callbacks, not a promise: this runs for every request.
 */
function readBody(request: IncomingMessage, maxBytes: number, done: (read: ReadBody) => void): void {
  const declared = Number(request.headers["content-length"]);
  if (declared > maxBytes) {
    done(TOO_LARGE);
    return;
  }
  let chunks: Buffer[] | Buffer | undefined;
  let size = 0;
  let finished = false;
  request.on("data", (chunk: Buffer) => {
    if (finished) return;
    size += chunk.length;
    if (size > maxBytes) {
      finished = true;
      chunks = undefined;
      done(TOO_LARGE);
    } else if (chunks === undefined) chunks = chunk;
    else if (Array.isArray(chunks)) chunks.push(chunk);
    else chunks = [chunks, chunk];
  });
  request.on("end", () => {
    if (finished) return;
    finished = true;
    const body = chunks === undefined ? EMPTY : Array.isArray(chunks) ? Buffer.concat(chunks, size) : chunks;
    chunks = undefined;
    done({ body, tooLarge: false });
  });
}

function write(response: ServerResponse, outcome: SandboxOutcome): number | undefined {
  if (outcome.kind === "destroy") {
    response.socket?.destroy();
    return undefined;
  }
  if (response.destroyed || response.headersSent) return undefined;
  const body = outcome.body ?? "";
  response.writeHead(outcome.status, withContentLength(outcome.headers, Buffer.byteLength(body)));
  response.end(body);
  return outcome.status;
}

/** The headers as the flat [name, value, …] list `writeHead` takes, content-length last (and only there). */
function withContentLength(headers: Readonly<Record<string, string>> | undefined, length: number): string[] {
  const list: string[] = [];
  if (headers !== undefined) {
    for (const name in headers) if (name !== "content-length") list.push(name, headers[name]!);
  }
  list.push("content-length", String(length));
  return list;
}

/** Answers one request: at once, or later when something makes it wait (a latency fault). Never throws. */
export type Serve = (request: SandboxRequest) => SandboxOutcome | Promise<SandboxOutcome>;

/**
 * The node:http request listener: converts, lets the simulator answer, writes the outcome. An answer
 * that is ready at once is written at once (no promise per request).
 */
export function requestListener(options: ResolvedSandboxOptions, serve: Serve) {
  const { maxBodyBytes, logRequests } = options;
  return (request: IncomingMessage, response: ServerResponse): void => {
    const started = logRequests ? performance.now() : 0;
    request.on("error", ignore); // a broken upload must not become an unhandled error
    response.on("error", ignore);
    const answer = (outcome: SandboxOutcome) => {
      const status = write(response, outcome);
      if (logRequests) {
        const ms = (performance.now() - started).toFixed(1);
        console.log(`${request.method} ${request.url} → ${status ?? "connection dropped"} (${ms} ms)`);
      }
    };
    readBody(request, maxBodyBytes, (read) => {
      let outcome: SandboxOutcome | Promise<SandboxOutcome>;
      try {
        outcome = serve({
          method: request.method ?? "GET",
          url: request.url ?? "/",
          headers: request.headers,
          body: read.body,
          bodyTooLarge: read.tooLarge,
        });
        if (!(outcome instanceof Promise)) {
          answer(outcome);
          return;
        }
      } catch (error) {
        failed(response, error);
        return;
      }
      outcome.then(answer).catch((error: unknown) => failed(response, error));
    });
  };
}

function failed(response: ServerResponse, error: unknown): void {
  console.error("[purchase-auth-sandbox] request failed:", error);
  response.socket?.destroy();
}

/** Answers requests node:http cannot parse with an error envelope, then closes the connection. */
export function clientErrorListener(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const status = error.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  const body = errorResponse(status).body ?? "";
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}
