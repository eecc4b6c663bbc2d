/**
 * The webhook's raw body as Medusa hands it over: a Buffer with the local event bus, a string, or,
 * after a trip through a serialising event bus (Redis), `{ type: "Buffer", data: [...] }`. The
 * signature covers these exact bytes, so they are restored, never re-serialised from parsed JSON.
 */
export function rawBodyOf(rawData: unknown): string | Uint8Array {
  if (typeof rawData === "string" || rawData instanceof Uint8Array) return rawData;
  if (typeof rawData === "object" && rawData !== null) {
    const { type, data } = rawData as { type?: unknown; data?: unknown };
    if (type === "Buffer" && Array.isArray(data)) return Uint8Array.from(data as number[]);
  }
  // verifyWebhook then reports the signature as invalid.
  return "";
}
