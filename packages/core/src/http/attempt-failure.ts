import type { TokenEndpointUnreachableError } from "../auth/token-provider.js";
import type { HttpResponse } from "./transport.js";

// What went wrong with one attempt, when it did not end the call, and whether it may have reached
// the service. The executor's rule: once any attempt may have taken effect, only a definite answer
// about the same key can make the outcome anything but unknown.

export type AttemptFailure =
  /** No connection was made (refused, name not resolved, connect timeout): nothing was sent. */
  | { kind: "not_connected"; error: unknown }
  /** The connection broke under the request: it may have arrived. */
  | { kind: "network"; error: unknown }
  /** No answer in time: it may have arrived. */
  | { kind: "timeout" }
  /** 5xx, 408, 409 in progress, 429, or a 2xx whose body this client cannot read. */
  | { kind: "http"; response: HttpResponse; unreadable?: boolean }
  /** The token endpoint could not be reached: nothing was sent to the service. */
  | { kind: "token"; error: TokenEndpointUnreachableError }
  /** The deadline passed while waiting for a token: nothing was sent on this attempt. */
  | { kind: "deadline" };

/** Error codes of a connection that was never made: the request cannot have arrived. */
const NOT_CONNECTED_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

export function isNotConnected(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && NOT_CONNECTED_CODES.has(code);
}

export function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  const code = (error as { code?: unknown } | undefined)?.code;
  return (
    name === "TimeoutError" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    (error instanceof DOMException && error.name === "TimeoutError")
  );
}

export function isUndiciError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && code.startsWith("UND_ERR");
}

export function describeFailure(failure: AttemptFailure): string {
  switch (failure.kind) {
    case "http":
      return failure.unreadable
        ? `HTTP ${failure.response.status} with an unreadable body`
        : `HTTP ${failure.response.status}`;
    case "timeout":
      return "attempt timed out";
    case "network":
      return `connection failed (${(failure.error as { code?: string }).code ?? "unknown"})`;
    case "not_connected":
      return `could not connect (${(failure.error as { code?: string }).code ?? "unknown"})`;
    case "token":
      return "token endpoint unreachable";
    case "deadline":
      return "deadline passed";
  }
}

/**
 * Waits for `promise`, but no longer than `ms` and not past the caller's abort: the token fetch
 * must honour both (the fetch itself goes on for the other callers that share it).
 */
export function bounded<T>(promise: Promise<T>, signal: AbortSignal | undefined, ms: number): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => finish(() => reject(signal!.reason));
    const timer = setTimeout(() => finish(() => reject(DEADLINE)), Math.max(0, ms));
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      settle();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error)),
    );
  });
}

/** What `bounded` rejects with when its time ran out. */
export const DEADLINE: unique symbol = Symbol("deadline");
