import type { SandboxRequest } from "./types.js";

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** The media type of a Content-Type header in lower case, without parameters. */
export function mediaType(contentType: string | undefined): string | undefined {
  if (contentType === "application/json") return contentType; // what every client sends
  return contentType?.split(";", 1)[0]?.trim().toLowerCase();
}

export function bodyLength(request: SandboxRequest): number {
  const { body } = request;
  if (body === undefined) return 0;
  return typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
}

/** The body as text, or undefined when it is not valid UTF-8. */
export function bodyText(request: SandboxRequest): string | undefined {
  const { body } = request;
  if (body === undefined) return "";
  if (typeof body === "string") return body;
  try {
    return UTF8.decode(body);
  } catch {
    return undefined;
  }
}

export type ParsedJson = { ok: true; value: unknown } | { ok: false; message: string };

/** Parses a JSON body; `emptyAs` is the value of an empty body (undefined = an empty body is an error). */
export function parseJsonBody(request: SandboxRequest, emptyAs?: unknown): ParsedJson {
  const text = bodyText(request);
  if (text === undefined) return { ok: false, message: "(request) must be UTF-8 encoded JSON" };
  if (text.trim() === "" && emptyAs !== undefined) return { ok: true, value: emptyAs };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, message: "(request) must be valid JSON" };
  }
}
