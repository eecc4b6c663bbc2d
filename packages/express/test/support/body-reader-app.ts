import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import express from "express";
import { jsonBodyReader } from "../../src/http/json-body.js";

// An Express app with the write routes' body reader and express.json() side by side, for the
// differential tests of the reader (test/json-body*.test.ts). In a test file that mocks "express"
// as "express4", this app is an Express 4 app.

export interface ErrorSeen {
  status: unknown;
  type: unknown;
}

export interface RawAnswer {
  /** 0 when no answer came in time. */
  status: number;
  text: string;
}

export interface BodyReaderApp {
  url: URL;
  /** The errors each route passed to next(err), by route ("fast", "reference", …). */
  errors: Record<string, ErrorSeen[]>;
  /** Requests the reader handed to express.json() instead of reading them itself. */
  handedOn(): number;
  /** Exceptions nothing caught while the app ran. */
  uncaught: unknown[];
  close(): Promise<void>;
}

/**
 * Routes, each answering `{ body }` (what reached req.body) or `{ error: { status, type } }`:
 * `/fast` behind the reader, `/reference` behind express.json(), `/pre-parsed` (express.json()
 * first, then the reader), and `/fast-text` and `/reference-text` behind a middleware that asked
 * for text chunks (`req.setEncoding`).
 */
export async function startBodyReaderApp(limit: number): Promise<BodyReaderApp> {
  const errors: Record<string, ErrorSeen[]> = {};
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on("uncaughtException", onUncaught);
  let handedOn = 0;
  const app = express();
  const reference = express.json({ limit });
  const countedReference: express.RequestHandler = (req, res, next) => {
    handedOn++;
    reference(req, res, next);
  };
  const answer: express.RequestHandler = (req, res) => {
    res.json({ body: req.body === undefined ? "(undefined)" : req.body });
  };
  const textChunks: express.RequestHandler = (req, _res, next) => {
    req.setEncoding("utf8");
    next();
  };
  app.post("/fast", jsonBodyReader(limit, countedReference), answer);
  app.post("/reference", reference, answer);
  app.post("/pre-parsed", express.json(), jsonBodyReader(limit, countedReference), answer);
  app.post("/fast-text", textChunks, jsonBodyReader(limit, countedReference), answer);
  app.post("/reference-text", textChunks, reference, answer);
  app.use(((error, req, res, _next) => {
    const { status, type } = error as { status?: unknown; type?: unknown };
    const route = req.path.slice(1);
    errors[route] = [...(errors[route] ?? []), { status, type }];
    res.status(typeof status === "number" ? status : 500).json({ error: { status, type } });
  }) as express.ErrorRequestHandler);
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    errors,
    handedOn: () => handedOn,
    uncaught,
    close: () =>
      new Promise((resolve) => {
        process.off("uncaughtException", onUncaught);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * A raw HTTP/1.1 POST (headers as given, `parts` written one by one with a pause between, so a
 * body can be split anywhere, even inside a character); the answer's status and body.
 */
export function postRaw(
  url: URL,
  path: string,
  headers: Record<string, string>,
  parts: Buffer[],
  timeoutMs = 5_000,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const head = [`POST ${path} HTTP/1.1`, `Host: ${url.host}`, "Connection: close"];
    for (const [name, value] of Object.entries(headers)) head.push(`${name}: ${value}`);
    const received: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ status: 0, text: "(no answer)" });
    }, timeoutMs);
    socket.on("data", (chunk) => received.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      clearTimeout(timer);
      const raw = Buffer.concat(received).toString("utf8");
      const [statusLine = "", ...rest] = raw.split("\r\n");
      const body = rest.join("\r\n").split("\r\n\r\n").slice(1).join("\r\n\r\n");
      resolve({ status: Number(statusLine.split(" ")[1]), text: body });
    });
    socket.write(`${head.join("\r\n")}\r\n\r\n`);
    const writeNext = (index: number) => {
      if (index === parts.length) return;
      socket.write(parts[index]!, () => setTimeout(() => writeNext(index + 1), 5));
    };
    writeNext(0);
  });
}

/** A body's headers: a JSON content type (or `headers`) and its Content-Length. */
export function framed(
  body: Buffer,
  headers: Record<string, string> = { "Content-Type": "application/json" },
) {
  return { ...headers, "Content-Length": String(body.length) };
}
