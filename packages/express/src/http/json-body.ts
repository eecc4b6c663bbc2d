import type { Request, RequestHandler } from "express";

/**
 * Reads the JSON body of the router's write routes. The request browsers and servers send — no
 * Content-Encoding, a Content-Length within `limit`, UTF-8 — is read here, as `express.json()`
 * would read it: an empty body is `{}`, a leading byte order mark is dropped, anything but an
 * object or array at the top is refused (strict), and the errors carry body-parser's `status` and
 * `type`, so they are answered the same. Everything else (compressed or chunked bodies, another
 * charset, a body the app has read already) is left to `parseJson` (`express.json()`): its rules
 * and answers stay the contract, this is only the cheaper way through for the common request
 * (body-parser's generic reader was a tenth of a charge's CPU).
 */
export function jsonBodyReader(limit: number, parseJson: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const length = plainJsonLength(req);
    if (length === undefined || length > limit) {
      parseJson(req, res, next);
      return;
    }
    readBody(req, length, (error, text) => {
      if (error) return next(error);
      try {
        req.body = parseStrictJson(text!);
      } catch (parseError) {
        return next(parseError);
      }
      next();
    });
  };
}

/** The Content-Length of a request this reader takes; undefined for any other request. */
function plainJsonLength(req: Request): number | undefined {
  // Read already (the app's own express.json() before the router): body-parser knows what to do.
  if (req.body !== undefined || (req as { _body?: unknown })._body || !req.readable) return undefined;
  // Chunks would be strings (an earlier middleware called setEncoding): express.json() refuses it.
  if (req.readableEncoding !== null) return undefined;
  const { headers } = req;
  if (headers["transfer-encoding"] !== undefined) return undefined;
  const encoding = headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return undefined;
  if (!isUtf8Json(headers["content-type"])) return undefined;
  const length = headers["content-length"];
  if (length === undefined || !/^\d{1,15}$/.test(length)) return undefined;
  return Number(length);
}

/**
 * `application/json` alone or with `; charset=utf-8` (what fetch, undici and axios send), in any
 * letter case and nothing else normalised: a parameter written any other way is for express.json()
 * to judge (it may refuse it, or, on Express 4, leave the body unread).
 */
function isUtf8Json(contentType: string | undefined): boolean {
  if (contentType === "application/json") return true;
  if (contentType === undefined) return false;
  const lower = contentType.toLowerCase();
  return UTF8_JSON_TYPES.includes(lower);
}

const UTF8_JSON_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/json;charset=utf-8",
];

/**
 * Collects exactly `length` bytes, as text; a shorter or longer body is an error, as in raw-body.
 * Listeners are closures of this request on purpose: shared module functions (tried, ~0.4 KiB less
 * per charge) broke context libraries that bind an emitter's listener functions (cls-hooked's
 * `bindEmitter`): the request that registered last lent its context to every other's `next()`.
 */
function readBody(req: Request, length: number, done: (error: Error | null, text?: string) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (error: Error | null, text?: string) => {
    if (finished) return;
    finished = true;
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    req.off("aborted", onAborted);
    req.off("close", onClose);
    // What is left unread is drained, so the connection can carry the error answer.
    if (error) req.resume();
    done(error, text);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > length) {
      finish(bodyError(400, "request.size.invalid", "request size did not match content length"));
    } else chunks.push(chunk);
  };
  const onEnd = () => {
    if (received !== length) {
      finish(bodyError(400, "request.size.invalid", "request size did not match content length"));
      return;
    }
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
    finish(null, bytes.toString("utf8"));
  };
  const onError = (error: Error) => finish(error);
  const onAborted = () => finish(bodyError(400, "request.aborted", "request aborted"));
  const onClose = () => finish(bodyError(400, "request.aborted", "request aborted"));
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
  req.on("aborted", onAborted);
  req.on("close", onClose);
}

/** body-parser's strict JSON: empty is {}, the top level an object or an array. */
function parseStrictJson(text: string): unknown {
  // UTF-8 decoders used by body-parser drop a byte order mark.
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json.length === 0) return {};
  const first = json.trimStart()[0];
  if (first !== "{" && first !== "[") {
    throw bodyError(400, "entity.parse.failed", "the request body must be a JSON object or array");
  }
  try {
    return JSON.parse(json);
  } catch (error) {
    throw bodyError(400, "entity.parse.failed", (error as Error).message);
  }
}

/** An error shaped as body-parser's (http-errors): `status`, `statusCode`, `type`, `expose`. */
function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, type, expose: true });
}
