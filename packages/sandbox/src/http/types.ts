/** One HTTP request as the simulator sees it; node:http requests are converted to this. */
export interface SandboxRequest {
  method: string;
  /** Request target as on the request line: path and optional query ("/sandbox/orders?status=Activated"). */
  url: string;
  /** Header names in lower case (as node:http gives them). */
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** Raw body; omitted or empty for none. */
  body?: Uint8Array | string;
  /** Set by a transport that stopped reading because the body passed `maxBodyBytes`. */
  bodyTooLarge?: boolean;
}

/** A response to send. */
export interface ApiResponse {
  status: number;
  headers?: Readonly<Record<string, string>>;
  /** Serialized JSON; omitted for an empty body (202 of the order writes). */
  body?: string;
}

/** What the transport does with a request: answer it, or drop the connection (faults). */
export type SandboxOutcome = ({ kind: "respond" } & ApiResponse) | { kind: "destroy" };

/** The first value of a header, if present. */
export function headerValue(request: SandboxRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value : value?.[0];
}
