import { Agent, type Dispatcher } from "undici";

/** What one HTTP attempt sends. */
export interface HttpRequest {
  method: "GET" | "POST" | "DELETE";
  url: URL;
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
}

/**
 * The default dispatcher: one keep-alive pool per origin. Sockets idle longer than the server's
 * keep-alive hint are closed by undici before reuse; a reset that still slips through (a server
 * that closed first) is retried once by the executor.
 */
export function createDefaultDispatcher(): Dispatcher {
  return new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000, connections: 128 });
}

/** Sends one attempt. Throws on network failure, timeout or abort; never on an HTTP status. */
export async function sendOnce(dispatcher: Dispatcher, request: HttpRequest): Promise<HttpResponse> {
  // One controller and one timer per attempt, both released as soon as it ends: an
  // AbortSignal.timeout would keep its timer alive for the whole timeout (tens of thousands under
  // load), and AbortSignal.any costs more than the request's own work.
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("The attempt timed out", "TimeoutError")),
    request.timeoutMs,
  );
  const caller = request.signal;
  const forwardAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) forwardAbort();
  else caller?.addEventListener("abort", forwardAbort, { once: true });
  try {
    const response = await dispatcher.request({
      origin: request.url.origin,
      path: request.url.pathname + request.url.search,
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
    });
    const body = await response.body.text();
    return { status: response.statusCode, headers: response.headers, body };
  } finally {
    clearTimeout(timer);
    caller?.removeEventListener("abort", forwardAbort);
  }
}

/** A header value as one string (undici gives arrays for repeated headers). */
export function headerValue(headers: HttpResponse["headers"], name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** Error codes of a connection that broke under us: the request may or may not have arrived. */
const CONNECTION_RESET_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ECONNREFUSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "ETIMEDOUT",
  "EAI_AGAIN",
]);

export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && CONNECTION_RESET_CODES.has(code);
}

/** A reset on a socket that was probably reused from the keep-alive pool. */
export function isStaleSocketReset(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE";
}
