import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { Simulator } from "../simulator.js";
import { errorResponse } from "./envelopes.js";
import type { SandboxOutcome } from "./types.js";

type ReadBody = { body: Buffer; tooLarge: boolean } | undefined;

/**
 * Reads at most `maxBytes` of the body. Past the limit it stops collecting and answers at once; node
 * discards the rest of the upload after the response, so the connection stays usable.
 * undefined = the client went away.
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<ReadBody> {
  const declared = Number(request.headers["content-length"]);
  if (declared > maxBytes) return Promise.resolve({ body: Buffer.alloc(0), tooLarge: true });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: ReadBody) => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onGone);
      request.off("close", onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish({ body: Buffer.alloc(0), tooLarge: true });
      else chunks.push(chunk);
    };
    const onEnd = () => finish({ body: Buffer.concat(chunks, size), tooLarge: false });
    const onGone = () => finish(undefined);
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onGone);
    request.on("close", onGone);
  });
}

function write(response: ServerResponse, outcome: SandboxOutcome): number | undefined {
  if (outcome.kind === "destroy") {
    response.socket?.destroy();
    return undefined;
  }
  if (response.destroyed || response.headersSent) return undefined;
  const body = outcome.body ?? "";
  response.writeHead(outcome.status, { ...outcome.headers, "content-length": Buffer.byteLength(body) });
  response.end(body);
  return outcome.status;
}

/** The node:http request listener: converts, lets the simulator answer, writes the outcome. */
export function requestListener(simulator: Simulator) {
  const { maxBodyBytes, logRequests } = simulator.options;
  return (request: IncomingMessage, response: ServerResponse): void => {
    const started = logRequests ? performance.now() : 0;
    request.on("error", () => undefined); // a broken upload must not become an unhandled error
    response.on("error", () => undefined);
    void (async () => {
      const read = await readBody(request, maxBodyBytes);
      if (read === undefined) return;
      const outcome = await simulator.handle({
        method: request.method ?? "GET",
        url: request.url ?? "/",
        headers: request.headers,
        body: read.body,
        bodyTooLarge: read.tooLarge,
      });
      const status = write(response, outcome);
      if (logRequests) {
        const ms = (performance.now() - started).toFixed(1);
        console.log(`${request.method} ${request.url} → ${status ?? "connection dropped"} (${ms} ms)`);
      }
    })().catch((error: unknown) => {
      console.error("[purchase-auth-sandbox] request failed:", error);
      response.socket?.destroy();
    });
  };
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
