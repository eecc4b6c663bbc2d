import { createHmac, timingSafeEqual } from "node:crypto";

/** `v1=` + hex HMAC-SHA256 of `"<timestamp>.<raw body>"` (supplement section C). */
export function computeSignature(
  rawBody: string | Uint8Array,
  timestamp: number | string,
  secret: string,
): string {
  const hmac = createHmac("sha256", secret);
  hmac.update(`${timestamp}.`);
  hmac.update(rawBody);
  return hmac.digest("hex");
}

/** The hex digests of every `v1=` entry in a signature header ("v1=ab..,v1=cd.."). */
export function parseSignatureHeader(header: string): string[] {
  return header
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.startsWith("v1="))
    .map((part) => part.slice(3));
}

/** Constant-time comparison of two hex digests. */
export function signaturesMatch(expectedHex: string, givenHex: string): boolean {
  if (!/^[0-9a-f]+$/i.test(givenHex)) return false;
  const expected = Buffer.from(expectedHex, "hex");
  const given = Buffer.from(givenHex, "hex");
  return expected.length === given.length && timingSafeEqual(expected, given);
}
