import { Agent, type Dispatcher, util } from "undici";

/** What one HTTP attempt sends. */
export interface HttpRequest {
  method: "GET" | "POST" | "DELETE";
  /** `http://host:port`, as `URL.origin` gives it. */
  origin: string;
  /** Path and query, as `URL.pathname + URL.search` give them. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Limit of the whole attempt, from sending to the last byte of the body. */
  timeoutMs: number;
  /** The caller's signal, if any. */
  signal?: AbortSignal;
}

/** What one HTTP attempt got back; the body is always read in full so the socket is reused. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body as last checked against a schema, so one answer is parsed and checked once. */
  checked?: { schema: unknown; result: { success: boolean } };
}

/**
 * The default dispatcher: one keep-alive pool per origin. Sockets idle longer than the server's
 * keep-alive hint are closed by undici before reuse; a reset that still slips through (a server
 * that closed first) is retried once by the executor.
 */
export function createDefaultDispatcher(): Dispatcher {
  return new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, connections: 128 });
}

/**
 * Sends one attempt. Throws on network failure, timeout or abort; never on an HTTP status.
 *
 * It talks to the dispatcher's handler interface, as `dispatcher.request` does inside, but collects
 * the body into one string instead of a stream, and aborts the attempt itself: no AbortController,
 * no stream, no listener on a signal of ours. Timeout and abort behave as they did through
 * `request` with a signal: an abort before the request reached a socket takes effect when it
 * reaches one (nothing is written then); after that it ends the attempt at once.
 */
export function sendOnce(dispatcher: Dispatcher, request: HttpRequest): Promise<HttpResponse> {
  return new Promise<HttpResponse>((resolve, reject) => {
    const attempt = new Attempt(resolve, reject, request.signal);
    attempt.timer = setTimeout(timeOut, request.timeoutMs, attempt);
    const options: Dispatcher.DispatchOptions = {
      origin: request.origin,
      path: request.path,
      method: request.method,
      headers: request.headers,
    };
    if (request.body !== undefined) options.body = request.body;
    // A dispatcher that throws instead of calling onResponseError still ends the attempt.
    try {
      dispatcher.dispatch(options, attempt);
    } catch (error) {
      attempt.fail(error);
    }
  });
}

/** Aborts an attempt whose time ran out (a plain function: no closure per attempt). */
function timeOut(attempt: Attempt): void {
  attempt.abort(new DOMException("The attempt timed out", "TimeoutError"));
}

/**
 * One attempt's dispatch handler: collects the answer, ends on the first of answer, error, abort.
 * undici 7 calls the `onRequestStart`… methods; a dispatcher of an older undici (Node 20's and 22's
 * own, which can be the global one) calls `onConnect`… instead, and gets the same behaviour.
 */
class Attempt implements Dispatcher.DispatchHandler {
  timer: ReturnType<typeof setTimeout> | undefined;
  #resolve: (response: HttpResponse) => void;
  #reject: (error: unknown) => void;
  #caller: AbortSignal | undefined;
  #onCallerAbort: (() => void) | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  /** An older undici's abort function, in place of the controller. */
  #abortRequest: ((error: Error) => void) | undefined;
  /** Why the attempt is to be aborted, when that was decided before it reached a socket. */
  #abortReason: unknown;
  #aborting = false;
  #done = false;
  #status = 0;
  #headers: HttpResponse["headers"] = {};
  /** The final answer's body so far; undefined until its head (a 1xx head carries none). */
  #chunks: Buffer[] | undefined;
  #length = 0;

  constructor(
    resolve: (response: HttpResponse) => void,
    reject: (error: unknown) => void,
    caller: AbortSignal | undefined,
  ) {
    this.#resolve = resolve;
    this.#reject = reject;
    this.#caller = caller;
    if (caller === undefined) return;
    if (caller.aborted) {
      this.abort(caller.reason);
      return;
    }
    this.#onCallerAbort = () => this.abort(caller.reason);
    caller.addEventListener("abort", this.#onCallerAbort, { once: true });
  }

  /** Ends the attempt with `reason`: at once when it is on a socket, else when it reaches one. */
  abort(reason: unknown): void {
    if (this.#done || this.#aborting) return;
    this.#aborting = true;
    this.#abortReason = reason;
    if (this.#controller !== undefined) this.#controller.abort(reason as Error);
    else this.#abortRequest?.(reason as Error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#aborting) controller.abort(this.#abortReason as Error);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: HttpResponse["headers"],
  ): void {
    if (statusCode < 200) return; // 1xx: the answer is still to come
    this.#status = statusCode;
    this.#headers = headers;
    this.#chunks = [];
    this.#length = 0;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#chunks === undefined) return; // no final head yet: nothing to collect
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  onResponseEnd(): void {
    if (this.#done) return;
    // An answer that ended without a final status (only a 1xx head) is a broken answer to a
    // request that was sent: an error, so the outcome stays unknown, never "HTTP 0".
    if (this.#chunks === undefined) {
      this.fail(new Error("the answer ended without a final status line"));
      return;
    }
    // Decoded before the attempt is marked done: a body that cannot be turned into text (larger
    // than a string can be) must end the attempt as an error, not leave it waiting forever.
    let body: string;
    try {
      body = decode(this.#chunks, this.#length);
    } catch (error) {
      this.fail(error);
      return;
    }
    this.#finish();
    this.#resolve({ status: this.#status, headers: this.#headers, body, checked: undefined });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  // The same for an undici before 7.

  onConnect(abort: (error: Error) => void): void {
    this.#abortRequest = abort;
    if (this.#aborting) abort(this.#abortReason as Error);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.onResponseStart(undefined!, statusCode, util.parseHeaders(rawHeaders));
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.onResponseData(undefined!, chunk);
    return true;
  }

  onComplete(): void {
    this.onResponseEnd();
  }

  onError(error: Error): void {
    this.fail(error);
  }

  fail(error: unknown): void {
    if (this.#done) return;
    this.#finish();
    this.#reject(error);
  }

  #finish(): void {
    this.#done = true;
    clearTimeout(this.timer);
    if (this.#onCallerAbort !== undefined) this.#caller!.removeEventListener("abort", this.#onCallerAbort);
  }
}

/** The body as text, as undici's `body.text()` reads it: UTF-8, a leading byte order mark dropped. */
function decode(chunks: Buffer[], length: number): string {
  if (length === 0) return "";
  const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  const start = length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString("utf8", start, length);
}

/** A header value as one string (undici gives arrays for repeated headers). */
export function headerValue(headers: HttpResponse["headers"], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** A reset on a socket that was probably reused from the keep-alive pool. */
export function isStaleSocketReset(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE";
}
